"""Helpers shared by the UI tests: polling on the qasync loop, building a window."""

from __future__ import annotations

import asyncio
from typing import Any

from desktop_app.core.config.settings import Settings
from desktop_app.core.llm.registry import ModelRegistry
from desktop_app.core.store.async_store import AsyncStore


async def wait_for(predicate, timeout: float = 10.0, interval: float = 0.02) -> None:
    """Poll ``predicate`` on the running qasync loop (qtbot.waitUntil hangs inside it)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not predicate():
        if loop.time() > deadline:
            raise AssertionError(f"condition not met within {timeout} s")
        await asyncio.sleep(interval)


#: Windows made by make_window in the current test; ``close_windows`` ends them.
WINDOWS: list[Any] = []


async def close_windows() -> None:
    """Close every window this test made: stop runs, close stores, delete the widgets."""
    while WINDOWS:
        window = WINDOWS.pop()
        try:
            window.close()
            await window.controller.wait_idle()
            await window.ctx.aclose()
        except RuntimeError:  # already deleted by the test itself
            continue
        window.deleteLater()


async def make_window(qtbot: Any, *llms: Any, settings: Settings | None = None,
                      tools_factory: Any = None) -> Any:
    """A real MainWindow over a real store (in the test's app home) and the given models."""
    from desktop_app.ui.app_context import AppContext
    from desktop_app.ui.main_window import MainWindow

    registry = ModelRegistry()
    for llm in llms:
        registry.register(llm.model_id, llm)
    ctx = AppContext(settings=settings or Settings(), registry=registry,
                     store=await AsyncStore.open(), persist_settings=False)
    if tools_factory is not None:
        ctx.tools_factory = tools_factory
    window = MainWindow(ctx)
    WINDOWS.append(window)  # closed by the loop fixture (not qtbot: see close_windows)
    window.show()
    await window.start()
    return window
