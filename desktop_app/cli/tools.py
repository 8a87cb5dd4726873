"""``desktop-app tools``: list the tools a run would get (built-in and MCP), or call one.

Useful to check a workspace folder or an MCP server configuration without the window::

    desktop-app tools                      # every tool, whether it asks first, MCP status
    desktop-app tools --call convert_units --args '{"value": 5, "from_unit": "km", "to_unit": "mi"}'

Tools that change something ask on the terminal (y / n / always), exactly as in a run.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from typing import Any

from desktop_app.core.config.settings import load_settings
from desktop_app.core.errors import ToolArgumentError
from desktop_app.core.tools.confirmation import TerminalConfirmer
from desktop_app.core.tools.toolbox import Toolbox


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("tools", help="list the available tools or call one",
                                   description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--call", metavar="NAME", help="run one tool and print its result")
    parser.add_argument("--args", default="{}", metavar="JSON",
                        help="arguments for --call, a JSON object (default: {})")
    parser.add_argument("--no-mcp", action="store_true", help="do not start MCP servers")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    return asyncio.run(_run(args))


async def _run(args: argparse.Namespace) -> int:
    settings = load_settings()
    if args.no_mcp:
        settings.mcp_servers = []
    async with Toolbox(settings) as toolbox:
        registry = toolbox.registry()
        if args.call:
            return await _call(registry, args.call, args.args, TerminalConfirmer(settings=settings))
        for tool in registry:
            marker = "reads only " if tool.read_only else "asks first "
            print(f"{tool.name:28} {marker} {tool.description}")
        for name, error in toolbox.mcp_status.items():
            print(f"\nMCP server '{name}': {'running' if error is None else error}",
                  file=sys.stdout if error is None else sys.stderr)
        if not settings.tools.workspace:
            print("\n(No workspace folder is set, so the file, document and code tools are off.)")
    return 0


async def _call(registry: Any, name: str, raw_args: str, confirm: TerminalConfirmer) -> int:
    tool = registry.get(name)
    try:
        arguments = json.loads(raw_args)
    except json.JSONDecodeError as exc:
        raise ToolArgumentError(f"--args is not valid JSON: {exc}.",
                                hint='Example: --args \'{"value": 5}\'') from exc
    arguments = tool.validate(arguments)
    if not tool.read_only and not await confirm(tool.name, arguments):
        print(f"{tool.name} was not run.", file=sys.stderr)
        return 1
    result = await tool.run(arguments)
    if result.text:
        print(result.text)
    for artifact in result.artifacts:
        print(f"[artifact {artifact.name} ({artifact.mime_type}, {len(artifact.content)} chars)]")
    if result.error:
        print(f"error: {result.error}", file=sys.stderr)
        return 1
    return 0
