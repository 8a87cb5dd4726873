"""The asyncio event loop on top of Qt (qasync), safe to start and stop many times.

qasync stops its loop with ``QCoreApplication.exit()``. Since Qt 6.? that also emits
``aboutToQuit``, on which QtWebEngine shuts Chromium down: the next web view then crashes
the process. Here qasync runs a *local* ``QEventLoop`` instead of the application's, so
``run_until_complete`` can be called again and again (tests, benchmarks, the app itself)
and ``aboutToQuit`` is only emitted when the application really ends.
"""

from __future__ import annotations

import asyncio
from typing import Any

import qasync
from PySide6.QtCore import QEventLoop
from PySide6.QtWidgets import QApplication


class _LocalLoopApp:
    """Stands in for the QApplication inside qasync: exec/exit drive a local QEventLoop."""

    def __init__(self, app: QApplication) -> None:
        self._app = app
        self._loops: list[QEventLoop] = []

    def exec(self) -> int:
        loop = QEventLoop()
        self._loops.append(loop)
        try:
            return loop.exec()
        finally:
            self._loops.pop()

    def exit(self, code: int = 0) -> None:
        if self._loops:
            self._loops[-1].exit(code)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._app, name)


def make_event_loop(app: QApplication) -> asyncio.AbstractEventLoop:
    """A qasync loop on ``app`` that never quits the application when it stops."""
    return qasync.QEventLoop(_LocalLoopApp(app))  # type: ignore[arg-type]
