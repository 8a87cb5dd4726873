"""What the window works with: settings, the model registry, the store and the tools.

Built once at start-up (and rebuilt in part when settings change). Tests build one with a
registry of fake or real models and a store on a temporary folder.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from desktop_app.core.config.settings import (
    Settings,
    load_settings,
    save_settings,
    update_saved_settings,
)
from desktop_app.core.errors import DesktopAppError
from desktop_app.core.llm.factory import build_registry
from desktop_app.core.llm.registry import ModelRegistry
from desktop_app.core.llm.residency import Residency
from desktop_app.core.store.async_store import AsyncStore
from desktop_app.core.tools.base import ToolRegistry


def _default_tools(settings: Settings) -> ToolRegistry:
    # Imported on the first run: the built-in tools pull in document and chart libraries.
    from desktop_app.core.tools.builtin import default_tools

    return ToolRegistry(default_tools(settings))


@dataclass
class AppContext:
    """Shared services of one window."""

    settings: Settings
    registry: ModelRegistry
    store: AsyncStore
    #: Builds a fresh tool registry for one run (tools may hold per-run state).
    tools_factory: Callable[[Settings], ToolRegistry] = field(default=_default_tools)
    #: Settings changes are written to disk unless this is False (tests, benchmarks).
    persist_settings: bool = True
    #: The core ``Toolbox`` (built-ins + MCP servers) once ``start_tools`` ran.
    toolbox: Any = None
    #: Local documents (``documents()``), opened on first use.
    library: Any = None
    #: The last save of settings failed (disk full): the next one writes all of them.
    _unsaved: bool = False
    #: Which local models stay loaded (least recently used unloaded first).
    residency: Residency = field(init=False)
    #: The first launch's child process building the prompt state (``ui/app``), if any.
    preparing: asyncio.Future[None] | None = None

    def __post_init__(self) -> None:
        self.residency = Residency(lambda: self.registry)

    def documents(self) -> Any:
        """The ``DocumentLibrary`` (its SQLite file opens on first use; the embedding
        model loads on the first search or index, in a worker thread)."""
        if self.library is None:
            from desktop_app.core.documents import DocumentLibrary

            self.library = DocumentLibrary()
        return self.library

    @classmethod
    async def open(cls, settings: Settings | None = None) -> AppContext:
        """Load settings, build the registry (no model is loaded), open the store."""
        settings = settings if settings is not None else load_settings()
        return cls(settings=settings, registry=build_registry(settings),
                   store=await AsyncStore.open())

    def tools(self) -> ToolRegistry:
        """A fresh tool registry for one run (MCP tools included once they started)."""
        if self.toolbox is not None and self.tools_factory is _default_tools:
            registry: ToolRegistry = self.toolbox.registry(self.settings)
            return registry
        return self.tools_factory(self.settings)

    async def start_tools(self) -> dict[str, str | None]:
        """Start the configured MCP servers; returns server name → error (None: running)."""
        from desktop_app.core.tools.toolbox import Toolbox

        self.toolbox = Toolbox(self.settings)
        status: dict[str, str | None] = await self.toolbox.start()
        return status

    def update_settings(self, change: Callable[[Settings], bool]) -> Awaitable[None]:
        """Apply ``change`` to the settings the window holds, at once, and return the work
        that applies it to settings.json (read just before writing, off the Qt thread, so
        a change another program saved meanwhile is kept) for the caller to spawn.
        ``change`` returns whether it changed anything."""
        change(self.settings)
        if not self.persist_settings:
            return asyncio.sleep(0)
        return self._save_change(change)

    async def _save_change(self, change: Callable[[Settings], bool]) -> None:
        if self._unsaved:  # an earlier save failed: this one carries it as well
            await self.save_settings(self.settings)
            return
        try:
            await asyncio.to_thread(update_saved_settings, change)
        except DesktopAppError:
            self._unsaved = True
            raise

    async def save_settings(self, settings: Settings) -> None:
        """Make ``settings`` the window's settings and write them to settings.json (off
        the Qt thread). A disk that is full raises ``ConfigError`` and the file saved
        before stays as it was; the next save writes everything held."""
        self.settings = settings
        if not self.persist_settings:
            return
        try:
            await asyncio.to_thread(save_settings, settings)
        except DesktopAppError:
            self._unsaved = True
            raise
        self._unsaved = False

    async def apply_settings(self, settings: Settings) -> None:
        """Adopt new settings: save them unless they are already the ones saved, and
        rebuild the model registry, keeping every loaded model whose configuration did not
        change."""
        if settings is not self.settings:
            await self.save_settings(settings)
        old = self.registry
        self.registry = build_registry(settings)
        await self.registry.adopt_from(old)
        if self.toolbox is not None:  # restarts MCP servers only if their config changed
            await self.toolbox.apply_settings(settings)

    async def aclose(self) -> None:
        if self.library is not None:
            self.library.close()
        if self.toolbox is not None:
            await self.toolbox.aclose()
        await self.registry.aclose()
        await self.store.aclose()
