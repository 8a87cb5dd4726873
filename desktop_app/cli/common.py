"""Helpers shared by the CLI commands."""

from __future__ import annotations

import argparse

from desktop_app.core.llm.factory import build_registry
from desktop_app.core.llm.registry import ModelRegistry
from desktop_app.core.store.settings import load_settings


def add_model_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--model", "-m", metavar="NAME",
                        help="model name or role (default: the configured default model)")


def load_registry() -> ModelRegistry:
    return build_registry(load_settings())
