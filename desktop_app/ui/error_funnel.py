"""One path for every error the window meets: a line in the chat, never lost, never a
traceback.

The app's own errors (``DesktopAppError``) already say what to do and are shown as they
are. Anything else (a bug, a damaged database, a full disk) is shown as one line from
``crash_report.explain`` and its traceback goes to a report file (keys removed) whose
path the line gives. ``install`` routes the asyncio loop's unhandled task errors and Qt
slot exceptions (``sys.excepthook``) to the same place, so a fire-and-forget task or a
button handler that fails is shown, too.
"""

from __future__ import annotations

import asyncio
import logging
import sys
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import Any

from desktop_app.core.crash_report import explain
from desktop_app.core.errors import DesktopAppError

log = logging.getLogger(__name__)

Show = Callable[[str], None]


def user_message(exc: BaseException, where: str = "window") -> str:
    """The line shown for ``exc``."""
    if isinstance(exc, DesktopAppError):
        return str(exc)
    line, report = explain(exc, where)
    log.error("unexpected error in the %s: %s", where, line)
    shown = f"Something went wrong: {line}"
    return f"{shown} Details for a bug report: {report}" if report else shown


def install(loop: asyncio.AbstractEventLoop, show: Show) -> None:
    """Show the loop's unhandled errors and Qt slot exceptions through ``show``."""

    def loop_handler(_loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        exc = context.get("exception")
        if isinstance(exc, BaseException) and not isinstance(exc, asyncio.CancelledError):
            _safely(show, user_message(exc, "task"))
        else:
            log.warning("event loop: %s", context.get("message"))

    def excepthook(kind: type[BaseException], exc: BaseException,
                   tb: TracebackType | None) -> None:
        if issubclass(kind, KeyboardInterrupt):
            sys.__excepthook__(kind, exc, tb)
            return
        _safely(show, user_message(exc.with_traceback(tb), "slot"))

    loop.set_exception_handler(loop_handler)
    sys.excepthook = excepthook


def _safely(show: Show, message: str) -> None:
    try:
        show(message)
    except Exception:  # noqa: BLE001 - the window is gone: the log line must do
        log.error("%s", message)


def show_startup_error(message: str) -> None:
    """The window could not open: say why in a dialog (people who start the app from a
    menu never see a terminal) and on stderr."""
    from PySide6.QtWidgets import QMessageBox

    print(f"desktop-app cannot start: {message}", file=sys.stderr)
    QMessageBox.critical(None, "desktop-app cannot start", message)


def offer_move_aside(message: str, path: Path) -> bool:
    """The database at ``path`` is damaged: ask whether to move it aside and start with an
    empty history (True) or quit (False)."""
    from PySide6.QtWidgets import QMessageBox

    print(f"desktop-app cannot open its database: {message}", file=sys.stderr)
    box = QMessageBox(QMessageBox.Icon.Critical, "desktop-app cannot open its history",
                      f"{message}\n\nMove it aside and start with an empty history? The "
                      f"file is kept beside it as {path.name}.damaged-<date> for recovery.")
    move = box.addButton("Move aside and start", QMessageBox.ButtonRole.AcceptRole)
    box.addButton("Quit", QMessageBox.ButtonRole.RejectRole)
    box.setDefaultButton(move)
    box.exec()
    return box.clickedButton() is move
