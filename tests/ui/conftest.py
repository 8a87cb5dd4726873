"""Fixtures for the Qt tests: WebEngine imported before the QApplication, a qasync loop."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

# Must happen before pytest-qt creates the QApplication (QtWebEngine requirement).
import PySide6.QtWebEngineWidgets  # noqa: F401,E402
import pytest

from desktop_app.ui.event_loop import make_event_loop  # noqa: E402


@pytest.fixture
def loop(qapp) -> Iterator[asyncio.AbstractEventLoop]:
    """A qasync loop on the test's QApplication; drive coroutines with run_until_complete.

    ``make_event_loop`` (not a bare ``qasync.QEventLoop``): stopping a bare one quits the
    application, which shuts QtWebEngine down and crashes the next test with a web view.
    """
    event_loop = make_event_loop(qapp)
    asyncio.set_event_loop(event_loop)
    try:
        yield event_loop
    finally:
        # Let cancelled tasks finish their cleanup before the loop goes away.
        pending = [t for t in asyncio.all_tasks(event_loop) if not t.done()]
        for task in pending:
            task.cancel()
        if pending:
            event_loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
        event_loop.close()
        asyncio.set_event_loop(None)

