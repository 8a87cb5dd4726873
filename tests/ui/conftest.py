"""Fixtures for the Qt tests: WebEngine imported before the QApplication, a qasync loop,
and deterministic clean-up of every window a test made."""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Iterator

# Must happen before pytest-qt creates the QApplication (QtWebEngine requirement).
import PySide6.QtWebEngineWidgets  # noqa: F401
import pytest
from PySide6.QtCore import QCoreApplication, QEvent

from desktop_app.ui.event_loop import make_event_loop


def _flush_deletions() -> None:
    """Delete dead widgets now, between tests, instead of whenever Python's cycle collector
    runs: a collection inside a later test's Qt event dispatch can delete a widget tree
    that Qt is still using (a segfault)."""
    gc.collect()
    QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    gc.collect()


def _cancel_pending(event_loop: asyncio.AbstractEventLoop) -> None:
    """Cancel the loop's unfinished tasks and let them finish their cleanup on the loop."""
    pending = [t for t in asyncio.all_tasks(event_loop) if not t.done()]
    for task in pending:
        task.cancel()
    if pending:
        event_loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))


@pytest.hookimpl(hookwrapper=True, trylast=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    """Settle a test's qasync loop as soon as the test returns. pytest-qt processes Qt
    events right after (outside any ``run_until_complete``): a task step queued on the
    loop (a window's refresh on show) would run there, with no running event loop, and
    fail with "no running event loop" in the window."""
    yield
    event_loop = getattr(item, "funcargs", {}).get("loop")
    if isinstance(event_loop, asyncio.AbstractEventLoop) and not event_loop.is_closed():
        _cancel_pending(event_loop)


@pytest.fixture(autouse=True)
def _qt_cleanup(qapp) -> Iterator[None]:
    yield
    _flush_deletions()


@pytest.fixture
def loop(qapp) -> Iterator[asyncio.AbstractEventLoop]:
    """A qasync loop on the test's QApplication; drive coroutines with run_until_complete.

    ``make_event_loop`` (not a bare ``qasync.QEventLoop``): stopping a bare one quits the
    application, which shuts QtWebEngine down and crashes the next test with a web view.
    """
    from ui_helpers import close_windows

    event_loop = make_event_loop(qapp)
    asyncio.set_event_loop(event_loop)
    try:
        yield event_loop
    finally:
        _cancel_pending(event_loop)
        event_loop.run_until_complete(close_windows())
        _flush_deletions()
        event_loop.close()
        asyncio.set_event_loop(None)
