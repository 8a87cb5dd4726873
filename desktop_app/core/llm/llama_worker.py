"""One dedicated thread per local model: every llama.cpp call runs on it, never on the loop.

llama.cpp contexts are not thread-safe, and a decode blocks for tens of milliseconds per
token, so the adapter hands each blocking job to this worker. Jobs run strictly in order
(FIFO), which also serialises requests from several asyncio tasks without a lock.

Streaming jobs push their items to asyncio with ``loop.call_soon_threadsafe`` as they are
produced (:class:`ThreadToAsyncChannel`); the worker is not bound to any event loop, so one
model can serve several loops in turn (each test runs its own loop).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
import queue
import threading
from collections.abc import Callable
from typing import Any, Generic, TypeVar

T = TypeVar("T")
_STOP = object()


#: How much nicer than the app the model's threads run (Linux/macOS ``nice`` steps).
WORKER_NICENESS = 10


def lower_priority(step: int | None = None) -> bool:
    """Make the calling thread (and the llama.cpp compute threads it starts, which inherit
    it) yield the CPU to the window: with generation on every core, a typed character took
    0.33 s to appear. Only the model slows, and only while something else wants the CPU.
    False where threads cannot be reniced (Windows, or a sandbox that forbids it)."""
    if not hasattr(os, "setpriority"):
        return False
    try:
        tid = threading.get_native_id()
        step = WORKER_NICENESS if step is None else step
        if step:
            os.setpriority(os.PRIO_PROCESS, tid, os.getpriority(os.PRIO_PROCESS, tid) + step)
    except OSError:
        return False
    return True


class ModelWorker:
    """A single worker thread that runs submitted callables one after another."""

    def __init__(self, name: str) -> None:
        self._name = name
        self._jobs: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._closed = False

    @property
    def thread(self) -> threading.Thread | None:
        """The worker thread (None until the first job is submitted)."""
        return self._thread

    @property
    def closed(self) -> bool:
        return self._closed

    def submit(self, fn: Callable[[], T]) -> concurrent.futures.Future[T]:
        """Queue ``fn`` to run on the worker thread; its result or exception lands in a future."""
        future: concurrent.futures.Future[T] = concurrent.futures.Future()
        with self._lock:
            if self._closed:
                raise RuntimeError(f"the model worker '{self._name}' is closed")
            if self._thread is None:
                # Started lazily so constructing a model costs nothing (listing, settings UI).
                self._thread = threading.Thread(target=self._run, name=f"llama-{self._name}",
                                                daemon=True)
                self._thread.start()
            self._jobs.put((future, fn))
        return future

    async def run(self, fn: Callable[[], T]) -> T:
        """Run ``fn`` on the worker and await its result from the current event loop."""
        return await asyncio.wrap_future(self.submit(fn))

    def shutdown(self) -> concurrent.futures.Future[None]:
        """Stop accepting jobs; the thread exits after the queued ones. Returns a done-future."""
        done: concurrent.futures.Future[None] = concurrent.futures.Future()
        with self._lock:
            if self._closed:
                done.set_result(None)
                return done
            self._closed = True
            if self._thread is None:
                done.set_result(None)
                return done
            self._jobs.put((_STOP, done))
        return done

    def _run(self) -> None:
        lower_priority()
        while True:
            future, fn = self._jobs.get()
            if future is _STOP:
                fn.set_result(None)
                return
            if not future.set_running_or_notify_cancel():
                continue  # the awaiting task was cancelled before the job started
            try:
                result = fn()
            except BaseException as exc:  # noqa: BLE001 - handed to the awaiting task
                future.set_exception(exc)
            else:
                future.set_result(result)


class ThreadToAsyncChannel(Generic[T]):
    """Items produced on a worker thread, consumed by one asyncio task.

    ``put`` is called from the worker; it never blocks. If the consuming loop is gone (closed),
    ``put`` reports it by returning False so the producer can stop early.
    """

    _END = object()

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._queue: asyncio.Queue[Any] = asyncio.Queue()

    def put(self, item: T) -> bool:
        return self._send(item)

    def fail(self, exc: BaseException) -> bool:
        return self._send(_Failure(exc))

    def close(self) -> bool:
        return self._send(self._END)

    def _send(self, item: Any) -> bool:
        try:
            self._loop.call_soon_threadsafe(self._queue.put_nowait, item)
        except RuntimeError:  # loop closed: nobody is listening any more
            return False
        return True

    async def get(self) -> tuple[bool, T | None]:
        """``(True, item)`` for the next item, ``(False, None)`` at the end; re-raises failures."""
        item = await self._queue.get()
        if item is self._END:
            return False, None
        if isinstance(item, _Failure):
            raise item.exc
        return True, item


class _Failure:
    __slots__ = ("exc",)

    def __init__(self, exc: BaseException) -> None:
        self.exc = exc
