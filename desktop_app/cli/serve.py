"""``desktop-app serve``: the app's models as an OpenAI-compatible API on this computer.

    desktop-app serve                          # http://127.0.0.1:8765/v1, key required
    desktop-app serve --port 9000 --model qwen2.5-coder-0.5b
    desktop-app serve --api-key my-script-key  # a key of your choosing
    desktop-app serve --no-key                 # no key (loopback only)
    desktop-app serve --print-key              # print the stored key and exit

Point any OpenAI client at the address with the key, e.g.
``OPENAI_BASE_URL=http://127.0.0.1:8765/v1 OPENAI_API_KEY=KEY``. The model
``desktop-app-agent`` runs the app's own agent with its tools.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import Any

from desktop_app.core import egress
from desktop_app.core.errors import ConfigError


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "serve", help="serve the models as an OpenAI-compatible API on this computer",
        description=__doc__.splitlines()[0] if __doc__ else None,
        formatter_class=argparse.RawDescriptionHelpFormatter, epilog="\n".join(
            (__doc__ or "").splitlines()[2:]))
    parser.add_argument("--host", default="127.0.0.1",
                        help="address to listen on (default 127.0.0.1: this computer only)")
    parser.add_argument("--port", type=int, default=8765, help="port (default 8765)")
    parser.add_argument("--model", "-m", action="append", metavar="NAME",
                        help="serve only this model (repeatable; default: every local model)")
    parser.add_argument("--serve-hosted", action="append", default=[], metavar="NAME",
                        help="also serve this hosted endpoint (its provider sees the requests)")
    key = parser.add_mutually_exclusive_group()
    key.add_argument("--api-key", metavar="KEY",
                     help="require this key instead of the stored one (visible to other "
                          "users in the process list: prefer DESKTOP_APP_SERVE_KEY=KEY)")
    key.add_argument("--no-key", action="store_true",
                     help="require no key (only when listening on this computer)")
    key.add_argument("--print-key", action="store_true",
                     help="print the stored key (making one if there is none) and exit")
    parser.add_argument("--no-agent", action="store_true",
                        help=f"do not offer the model '{'desktop-app-agent'}'")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from desktop_app.core.api_server.keys import server_key

    if args.print_key:
        print(server_key()[0])
        return 0
    return asyncio.run(_serve(args))


def _key(args: argparse.Namespace) -> str | None:
    from desktop_app.core.api_server.keys import server_key
    from desktop_app.core.errors import SecretsError

    if args.no_key:
        return None
    if args.api_key:
        return str(args.api_key)
    import os

    if os.environ.get("DESKTOP_APP_SERVE_KEY"):
        return os.environ["DESKTOP_APP_SERVE_KEY"]
    try:
        key, made = server_key()
    except SecretsError as exc:
        raise ConfigError(f"No API key could be kept for the server: {exc}",
                          hint="Pass --api-key KEY, or --no-key to listen without one "
                               "(this computer only).") from None
    if made:
        print(f"API key (made now, kept in your keyring; shown once — "
              f"'desktop-app serve --print-key' shows it again):\n  {key}", file=sys.stderr)
    return key


async def _serve(args: argparse.Namespace) -> int:
    from desktop_app.core.api_server import ApiServer, ServerOptions
    from desktop_app.core.config.settings import load_settings
    from desktop_app.core.llm.factory import build_registry
    from desktop_app.core.tools.base import ToolRegistry
    from desktop_app.core.tools.builtin import default_tools

    if not egress.is_local_host(args.host):
        print(f"warning: listening on {args.host}: other computers that can reach it may "
              "use your models (with the key).", file=sys.stderr)
    settings = load_settings()
    registry = build_registry(settings)
    for name in [*(args.model or []), *args.serve_hosted]:
        registry.entry(name)  # an unknown name is an error now, not at the first request
    options = ServerOptions(host=args.host, port=args.port, api_key=_key(args),
                            models=args.model, hosted=args.serve_hosted)
    tools = None if args.no_agent else (lambda: ToolRegistry(default_tools(settings)))
    server = ApiServer(registry, options, tools=tools)
    try:
        await server.start()
        names = ", ".join(server.pool.served())
        key_note = "no key" if options.api_key is None else "key required"
        print(f"Serving the OpenAI-compatible API at {server.base_url} ({key_note}); "
              f"models: {names}. Ctrl-C stops.", file=sys.stderr, flush=True)
        await server.wait()
    finally:
        await server.stop()
        await registry.aclose()
    return 0
