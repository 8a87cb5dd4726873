"""Helpers shared by the CLI commands."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from desktop_app.core.config.settings import Settings, load_settings
from desktop_app.core.errors import ConfigError
from desktop_app.core.llm.factory import build_registry
from desktop_app.core.llm.registry import ModelRegistry
from desktop_app.core.tools.base import Change
from desktop_app.core.tools.confirmation import TerminalConfirmer


def add_model_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--model", "-m", metavar="NAME",
                        help="model name or role (default: the configured default model)")


def load_registry() -> ModelRegistry:
    return build_registry(load_settings())


def add_prompt_arguments(parser: argparse.ArgumentParser, what: str = "question") -> None:
    """The prompt as words, as '-' (standard input) or as ``--file PATH``: a prompt of many
    megabytes does not fit on a command line."""
    parser.add_argument("question", nargs="*", metavar=what,
                        help=f"the {what} (quote it); '-' reads it from standard input")
    parser.add_argument("--file", "-f", metavar="PATH", type=Path,
                        help=f"read the {what} from this text file")


def read_prompt(args: argparse.Namespace, what: str = "question") -> str:
    """The prompt ``add_prompt_arguments`` describes; ConfigError with a hint when empty."""
    if args.file is not None:
        if args.question:
            raise ConfigError(f"Give the {what} either as words or with --file, not both.",
                              hint=f"Put all of it in {args.file}.")
        try:
            text = args.file.read_text(encoding="utf-8", errors="replace")
        except OSError as exc:
            raise ConfigError(f"The {what} file {args.file} could not be read: "
                              f"{exc.strerror or exc}.",
                              hint="Check the path and that you may read it.") from exc
    elif args.question == ["-"]:
        text = sys.stdin.read()
    else:
        text = " ".join(args.question)
    if not text.strip():
        raise ConfigError(f"No {what} given.",
                          hint="Type it after the command, pipe it in with '-', or use --file.")
    return text


def make_share_gate(*, assume_yes: bool) -> Any:
    """Before the user's files or notes go to a model on another computer: ask on the
    terminal (once per host for this command); ``--yes`` allows it."""
    from desktop_app.core.tools.sharing import ShareGates, terminal_ask

    if assume_yes:
        async def allow(_destination: str, _tool: str, _args: dict[str, Any]) -> bool:
            return True

        return ShareGates(allow)
    return ShareGates(terminal_ask())


def make_confirmer(settings: Settings, *, assume_yes: bool) -> Any:
    """Ask on the terminal (yes / no / always) before tools that change things; deny, saying
    why, when nobody can answer. ``--yes`` allows everything."""
    if assume_yes:
        async def allow(tool_name: str, args: dict[str, Any],
                        change: Change | None = None) -> bool:
            return True

        return allow
    return TerminalConfirmer(settings=settings)
