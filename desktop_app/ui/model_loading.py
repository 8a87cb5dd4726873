"""Loading the window's models: one copy per model, through the registry, off the Qt
thread, with progress; unloading what is not needed (``core.llm.residency``). A mixin of
``RunController`` (it owns the ``model_status``/``model_progress`` signals)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from desktop_app.core.llm.base import LLM

log = logging.getLogger(__name__)


def _import_adapter(kind: str) -> None:
    """Import a model's adapter (and its libraries) on the Qt thread, before any worker
    thread needs it: PySide6's import hook crashes the process when a module is first
    imported on another thread while the Qt event loop runs (seen with llama_cpp → jinja2)."""
    if kind in ("bundled", "local"):
        import desktop_app.core.llm.llama_cpp_adapter
        import desktop_app.core.llm.llama_loading  # loads llama_cpp itself
    elif kind == "endpoint":
        import desktop_app.core.llm.openai_adapter  # noqa: F401


class ModelLoading:
    """``ensure_llm`` and friends; needs ``ctx``, ``model_status`` and ``model_progress``."""

    ctx: Any
    model_status: Any
    model_progress: Any
    _loading: dict[str, asyncio.Task[LLM]]
    _documents_prepared: asyncio.Future[None] | None = None

    async def ensure_llm(self, name: str, keep: frozenset[str] = frozenset()) -> LLM:
        """The model ``name``, assembled and loaded off the Qt thread, with progress signals."""
        self.ctx.residency.used(name)
        task = self._loading.get(name)
        if task is None or (task.done() and (task.cancelled() or task.exception() is not None)):
            task = asyncio.ensure_future(self._load(name, keep))
            self._loading[name] = task
        return await asyncio.shield(task)

    async def _load(self, name: str, keep: frozenset[str] = frozenset()) -> LLM:
        loop = asyncio.get_running_loop()
        entry = self.ctx.registry.entry(name)
        try:
            if entry.kind == "bundled":
                from desktop_app.core.llm import bundled

                if not bundled.is_bundled_model_ready():
                    self.model_status.emit("Preparing the built-in model (first launch only)…")

                    def progress(done: int, total: int) -> None:
                        loop.call_soon_threadsafe(self.model_progress.emit, done, total)

                    await asyncio.to_thread(bundled.ensure_bundled_model, progress)
            _import_adapter(entry.kind)
            # The factory may verify files or open clients: not on the Qt thread.
            llm = await asyncio.to_thread(self.ctx.registry.get, name)
            load = getattr(llm, "load", None)
            if load is not None and not getattr(llm, "loaded", False):
                await self._make_room(name, keep)
                self.model_status.emit(f"Loading {name}…")
                self.model_progress.emit(0, 0)
                await load()
            if llm.reuses_prompt_prefix:
                from desktop_app.core.agent.factory import warm_up

                self.model_status.emit("Preparing the assistant…")
                preparing = self.ctx.preparing
                if preparing is not None and not preparing.done():
                    # The first launch's child is building it: waiting is shorter than
                    # doing the same work beside it (the state is then read from disk).
                    with contextlib.suppress(Exception):
                        await asyncio.shield(preparing)
                await warm_up(llm, self.ctx.tools())
            return llm
        finally:
            self.model_status.emit("")

    def prepare_documents(self, model: str | None, assistant: Any,
                          collections: list[str]) -> None:
        """Get the first question of a chat with ``collections`` attached ready while the
        user types it (``warm_up_documents``: the embedding model, and the model's prompt
        state for that chat's tools and assistant). A newer call replaces one not done."""
        previous = self._documents_prepared
        if previous is not None and not previous.done():
            previous.cancel()
        self._documents_prepared = (asyncio.ensure_future(
            self._prepare_documents(model, assistant, collections)) if collections else None)

    async def _prepare_documents(self, model: str | None, assistant: Any,
                                 collections: list[str]) -> None:
        from desktop_app.core.agent.factory import warm_up_documents
        from desktop_app.core.assistants import tools_for

        try:
            name = self.ctx.registry.resolve(model)
            task = self._loading.get(name)
            if task is None:
                return  # attaching documents does not load a model
            llm = await asyncio.shield(task)
            active = getattr(self, "active", None)
            if active is not None and active.task is not None:
                # Between the turns of a running answer the warm-up would take the model's
                # cache from it (the answer's next turn then evaluates its prompt again).
                await asyncio.wait([active.task])
            await warm_up_documents(llm, tools_for(assistant, self.ctx.tools()),
                                    self.ctx.documents(), collections,
                                    system_prompt=assistant.system_prompt.strip() or None)
        except Exception as exc:  # noqa: BLE001 - a head start only: the question meets it
            log.info("documents not prepared ahead: %s", exc)

    def loaded_models(self) -> set[str]:
        """Names of the models loaded in memory now (local ones hold their weights)."""
        names = set()
        for name, task in self._loading.items():
            if (task.done() and not task.cancelled() and task.exception() is None
                    and getattr(task.result(), "loaded", True)):
                names.add(name)
        return names

    def _in_use(self) -> set[str]:
        active = getattr(self, "active", None)
        return {active.model} if active is not None else set()

    async def _make_room(self, name: str, keep: frozenset[str]) -> None:
        """Unload the least recently used models the one about to load would not fit
        beside (the fit estimate against the memory free now); ``keep`` stay."""
        gone = await self.ctx.residency.make_room(name, keep=self._in_use() | keep)
        self._forget(gone)
        if gone:
            self.model_status.emit(f"Unloaded {', '.join(gone)} to make room for {name}…")

    async def unload_idle(self, keep: set[str | None]) -> list[str]:
        """Unload models unused for a while (``keep`` — None: the default model — and the
        running answer's stay)."""
        from desktop_app.core.errors import DesktopAppError

        kept = self._in_use()
        for name in keep:
            try:
                kept.add(self.ctx.registry.resolve(name))
            except DesktopAppError:
                continue
        gone = await self.ctx.residency.unload_idle(keep=kept)
        self._forget(gone)
        return gone

    def unload_when_idle(self, keep: Callable[[], set[str | None]],
                         spawn: Callable[[Any], Any], every_ms: int = 60_000) -> None:
        """Check every minute for models unused for a while (``keep()``: the one picked)."""
        from PySide6.QtCore import QObject, QTimer

        assert isinstance(self, QObject)
        def tick() -> None:
            try:
                asyncio.get_running_loop()
            except RuntimeError:  # the loop is not running (closing, or between tests)
                return
            spawn(self.unload_idle(keep()))

        self._idle_timer = QTimer(self)
        self._idle_timer.timeout.connect(tick)
        self._idle_timer.start(every_ms)

    def _forget(self, names: list[str]) -> None:
        for name in names:
            self._loading.pop(name, None)

    def forget_models(self) -> None:
        """The registry is about to be rebuilt: load models afresh from the new one."""
        self._loading.clear()

    def preload(self, name: str | None = None) -> asyncio.Task[LLM]:
        """Start loading a model in the background (first launch: the bundled one)."""
        resolved = self.ctx.registry.resolve(name)
        return asyncio.ensure_future(self.ensure_llm(resolved))

