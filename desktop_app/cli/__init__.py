"""Headless entry points. ``desktop-app`` with no command opens the window.

Every module in this package that defines ``register(subparsers)`` adds one subcommand, so
commands live next to nothing else and can be added without touching this file.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys
from collections.abc import Sequence

from desktop_app import __version__
from desktop_app.core.errors import DesktopAppError


def _build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="desktop-app",
        description="A private, local-first chat assistant. Without a command, opens the window.")
    parser.add_argument("--version", action="version", version=f"desktop-app {__version__}")
    parser.add_argument("--offline", action="store_true",
                        help="the offline lock: nothing leaves this computer (hosted models, "
                             "the model hub and downloads are refused; localhost is allowed)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda i: i.name):
        if info.name.startswith("_") or info.name == "common":
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        register = getattr(module, "register", None)
        if register is not None:
            register(sub)
    return parser


def _exit_cleanly_on_sigterm() -> None:
    """``kill`` (SIGTERM) ends a command through its ``finally`` blocks, so the privacy
    ledger's last rows (a request still streaming) are written before the process ends."""
    import signal
    import threading

    def stop(_signal: int, _frame: object) -> None:
        raise SystemExit(128 + signal.SIGTERM)

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, stop)


def _apply_offline_lock(flag: bool) -> None:
    """The lock is on for this process when asked with --offline or set in the settings."""
    from desktop_app.core import egress

    on = flag
    if not on:
        from desktop_app.core.config.settings import load_settings

        try:
            on = load_settings(strict=True).privacy.offline
        except DesktopAppError:
            on = False  # the command reports a broken settings file itself
    egress.set_offline(on)


def main(argv: Sequence[str] | None = None) -> int:
    arguments = list(sys.argv[1:] if argv is None else argv)
    if arguments[:2] == ["voice", "_piper"]:  # the speech synthesis child (core/voice/tts)
        from desktop_app.cli.voice import run_piper

        return run_piper(arguments[2:])
    if arguments[:1] == ["_prepare-assistant"]:  # the window's first-launch child (ui/app)
        from desktop_app.cli.prepare import run_prepare

        return run_prepare()
    parser = _build_parser()
    args = parser.parse_args(argv)
    from desktop_app.core import log_setup

    log_setup.install()  # warnings on stderr, keys scrubbed from every line
    _apply_offline_lock(args.offline)
    if args.command is None:
        from desktop_app.ui.app import run_app

        return run_app()
    from desktop_app.cli.terminal import SafeStream

    _exit_cleanly_on_sigterm()

    streams = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = SafeStream(sys.stdout), SafeStream(sys.stderr)  # type: ignore[assignment]
    try:
        return int(args.func(args) or 0)
    except DesktopAppError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("\ninterrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # noqa: BLE001 - the last line before a person sees a traceback
        from desktop_app.core.crash_report import explain

        line, report = explain(exc, args.command)
        print(f"error: {line}", file=sys.stderr)
        if report is not None:
            print(f"Details for a bug report: {report}", file=sys.stderr)
        return 1
    finally:
        sys.stdout, sys.stderr = streams
        from desktop_app.core import egress

        egress.flush_all()  # the ledger's last rows are written before the process ends
