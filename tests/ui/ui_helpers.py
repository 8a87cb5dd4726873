"""Helpers shared by the UI tests."""

from __future__ import annotations

import asyncio


async def wait_for(predicate, timeout: float = 10.0, interval: float = 0.02) -> None:
    """Poll ``predicate`` on the running qasync loop (qtbot.waitUntil hangs inside it)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not predicate():
        if loop.time() > deadline:
            raise AssertionError(f"condition not met within {timeout} s")
        await asyncio.sleep(interval)
