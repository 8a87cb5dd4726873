"""The models the server offers, and one queue per model.

The server and the window share the app's ``ModelRegistry``, so they share one loaded
copy of each model; each model generates one answer at a time (a local model's worker
thread would take turns anyway), and a request beyond ``max_waiting`` for one model is
refused with 429 instead of waiting without end. A model that is not loaded yet is
loaded in the background while the request is answered 503 with ``Retry-After`` (the
openai SDK and most clients retry such an answer).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from desktop_app.core.api_server.protocol import ApiError
from desktop_app.core.errors import DesktopAppError
from desktop_app.core.llm.base import LLM
from desktop_app.core.llm.registry import ModelRegistry

#: The model name that runs the app's own agent (its tools, notes and documents).
AGENT_MODEL = "desktop-app-agent"
#: Models in this process: the bundled one, local GGUF files, models registered as objects.
LOCAL_KINDS = ("bundled", "local", "custom")
#: Seconds a client is told to wait while a model loads.
RETRY_AFTER = 2


@dataclass
class ModelQueue:
    """Turn-taking for one model."""

    max_waiting: int
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    waiting: int = 0

    def check_room(self) -> None:
        """429 when the model is busy and ``max_waiting`` requests already wait for it."""
        if self.lock.locked() and self.waiting >= self.max_waiting:
            raise ApiError(429, f"{self.waiting} requests are already waiting for this "
                           "model; try again shortly.", kind="rate_limit_error",
                           code="queue_full", headers={"Retry-After": "1"})

    @contextlib.asynccontextmanager
    async def turn(self) -> AsyncIterator[None]:
        self.check_room()
        self.waiting += 1
        try:
            await self.lock.acquire()
        finally:
            self.waiting -= 1
        try:
            yield
        finally:
            self.lock.release()


Loader = Callable[[str], Awaitable[LLM]]


async def load_in_thread(registry: ModelRegistry, name: str) -> LLM:
    """Build and load a model off the event loop (the CLI's loader)."""
    llm = await asyncio.to_thread(registry.get, name)
    load = getattr(llm, "load", None)
    if load is not None and not getattr(llm, "loaded", False):
        await load()
    return llm


class ModelPool:
    """Which models are served, their loading, and their queues."""

    def __init__(self, registry: ModelRegistry, *, names: list[str] | None = None,
                 hosted: list[str] | None = None, loader: Loader | None = None,
                 max_waiting: int = 32, agent: bool = True) -> None:
        self.registry = registry
        self._names = names
        self._hosted = set(hosted or [])
        self._loader = loader or (lambda name: load_in_thread(registry, name))
        self.max_waiting = max_waiting
        self.agent = agent
        self._queues: dict[str, ModelQueue] = {}
        self._loading: dict[str, asyncio.Task[LLM]] = {}
        self._ready: dict[str, LLM] = {}
        #: Requests being answered or waiting, for the window's status ("serving 2").
        self.in_flight = 0
        self.on_change: Callable[[int], Any] | None = None

    def set_hosted(self, names: list[str]) -> None:
        """Which hosted endpoints are served from now on (the user ticked them)."""
        self._hosted = set(names)

    def served(self) -> list[str]:
        """Model names a client may ask for: the configured local models (or those named
        when the server started), hosted endpoints the user ticked, and the agent."""
        names = []
        for entry in self.registry.entries():
            chosen = (entry.name in self._names if self._names is not None
                      else entry.kind in LOCAL_KINDS)
            if chosen or entry.name in self._hosted:
                names.append(entry.name)
        return names + ([AGENT_MODEL] if self.agent else [])

    def resolve(self, name: str) -> str:
        if name in self.served():
            return name
        known = ", ".join(self.served()) or "none"
        raise ApiError(404, f"The model '{name}' does not exist on this server. Models: "
                       f"{known}.", code="model_not_found", param="model")

    def default_chat_model(self) -> str:
        local = [n for n in self.served() if n != AGENT_MODEL]
        try:
            default = self.registry.default_name
        except DesktopAppError:
            default = None
        if default in local:
            return default
        if not local:
            raise ApiError(404, "This server offers no chat model.", code="model_not_found")
        return local[0]

    async def ready(self, name: str) -> LLM:
        """The loaded model, or 503 while it loads (loading starts on the first ask)."""
        if name in self._ready:
            return self._ready[name]
        task = self._loading.get(name)
        if task is None:
            task = self._loading[name] = asyncio.ensure_future(self._loader(name))
        if task.done():
            self._loading.pop(name, None)
            try:
                llm = task.result()
            except DesktopAppError as exc:
                raise ApiError(500, f"The model '{name}' could not be loaded: {exc}",
                               kind="server_error", code="model_load_failed") from None
            self._ready[name] = llm
            return llm
        try:  # a small model loads in about a second: worth waiting that long
            await asyncio.wait_for(asyncio.shield(task), 1.5)
        except TimeoutError:
            raise ApiError(503, f"The model '{name}' is loading; try again in a moment.",
                           kind="server_error", code="model_loading",
                           headers={"Retry-After": str(RETRY_AFTER)}) from None
        except DesktopAppError:
            pass  # reported by the call below
        return await self.ready(name)

    def queue(self, name: str) -> ModelQueue:
        if name not in self._queues:
            self._queues[name] = ModelQueue(self.max_waiting)
        return self._queues[name]

    @contextlib.asynccontextmanager
    async def serving(self) -> AsyncIterator[None]:
        self._changed(+1)
        try:
            yield
        finally:
            self._changed(-1)

    def _changed(self, step: int) -> None:
        self.in_flight += step
        if self.on_change is not None:
            self.on_change(self.in_flight)
