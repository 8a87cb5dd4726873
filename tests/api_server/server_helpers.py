"""A real API server on loopback, run on an event loop of its own in a thread, so the
tests can use real (blocking and async) clients against it."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from desktop_app.core.api_server import ApiServer, ServerOptions
from desktop_app.core.llm.registry import ModelRegistry


class ThreadedServer:
    def __init__(self, registry: ModelRegistry, options: ServerOptions, **kwargs: Any) -> None:
        self.loop = asyncio.new_event_loop()
        self.server = ApiServer(registry, options, **kwargs)
        self._ready = threading.Event()
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._main, daemon=True)

    def _main(self) -> None:
        asyncio.set_event_loop(self.loop)
        try:
            self.loop.run_until_complete(self.server.start())
        except BaseException as exc:  # noqa: BLE001 - reported to the test
            self._error = exc
            self._ready.set()
            return
        self._ready.set()
        self.loop.run_forever()

    def start(self) -> ThreadedServer:
        self._thread.start()
        self._ready.wait(30)
        if self._error is not None:
            raise self._error
        return self

    def stop(self) -> None:
        asyncio.run_coroutine_threadsafe(self.server.stop(), self.loop).result(30)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(10)
        self.loop.close()

    @property
    def base_url(self) -> str:
        return self.server.base_url


@contextmanager
def running(registry: ModelRegistry, **options: Any) -> Iterator[ThreadedServer]:
    extra = {k: options.pop(k) for k in ("loader", "tools") if k in options}
    served = ThreadedServer(registry, ServerOptions(port=0, **options), **extra).start()
    try:
        yield served
    finally:
        served.stop()
