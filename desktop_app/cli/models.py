"""``desktop-app models``: the configured models, their roles and abilities (nothing is loaded)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from desktop_app.cli.common import load_registry
from desktop_app.core.llm.registry import ModelEntry, ModelRegistry


def register(subparsers: Any) -> None:
    """Add the ``models`` subcommand."""
    from desktop_app.cli.models_catalogue import add_subcommands

    parser = subparsers.add_parser(
        "models", help="list, find, download, measure and remove models",
        description="Without an action: list the configured models (name, kind, roles, "
                    "context size, abilities; '*' marks the default). No model is loaded.")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    parser.set_defaults(func=run_models)
    actions = parser.add_subparsers(dest="models_action", metavar="ACTION")
    add_subcommands(actions)


def _status(entry: ModelEntry) -> str:
    if entry.kind != "bundled":
        return ""
    from desktop_app.core.llm.bundled import is_bundled_model_ready

    return "ready" if is_bundled_model_ready() else "set up on first use"


def describe(registry: ModelRegistry) -> list[dict[str, Any]]:
    """One record per model, in configuration order (effective roles, default flag)."""
    default = registry.default_name if len(registry) else None
    roles_by_model: dict[str, list[str]] = {}
    for role, name in sorted(registry.roles().items()):
        roles_by_model.setdefault(name, []).append(role)
    return [{
        "name": entry.name,
        "kind": entry.kind,
        "default": entry.name == default,
        "roles": roles_by_model.get(entry.name, []),
        "context_size": entry.context_size,
        "abilities": sorted(key for key, on in entry.abilities.items() if on),
        "description": entry.description,
        "status": _status(entry),
    } for entry in registry.entries()]


def format_table(records: list[dict[str, Any]]) -> str:
    """A plain-text table; '*' marks the default model."""
    if not records:
        return "No models are configured. Enable the bundled model or add one in Settings."
    header = ["", "NAME", "KIND", "CONTEXT", "ROLES", "ABILITIES", "DESCRIPTION"]
    rows = [header]
    for r in records:
        description = r["description"] + (f" [{r['status']}]" if r["status"] else "")
        rows.append(["*" if r["default"] else "", r["name"], r["kind"], str(r["context_size"]),
                     ", ".join(r["roles"]) or "-", ", ".join(r["abilities"]) or "-", description])
    widths = [max(len(row[i]) for row in rows) for i in range(len(header) - 1)]
    lines = ["  ".join(cell.ljust(width) for cell, width in zip(row[:-1], widths)) + "  " + row[-1]
             for row in rows]
    return "\n".join(line.rstrip() for line in lines) + "\n* = default model"


def run_models(args: argparse.Namespace) -> int:
    records = describe(load_registry())
    if args.json:
        json.dump(records, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        print(format_table(records))
    return 0
