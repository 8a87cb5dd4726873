"""Which local models stay in memory.

Every run kind gets its model from the one registry, so each model file is loaded once.
What is loaded is kept while it is used; before another model loads, the least recently
used ones are unloaded until the fit estimate of the new one (``catalogue.fit``, at its
context) fits in the memory free at that moment, measured again after each unload; and a
model nobody used for ``idle_seconds`` is unloaded. Models in use (``keep``, or a
generation running on them) are never unloaded.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from pathlib import Path

from desktop_app.core.llm.registry import ModelEntry, ModelRegistry

#: Unloaded after this long unused (the model picked in the window is kept regardless).
IDLE_SECONDS = 15 * 60


def memory_needed(entry: ModelEntry) -> int | None:
    """Bytes ``entry``'s model needs right after loading at its context (blocking: reads the
    GGUF header); None for models that hold no weights here or cannot be read."""
    if not entry.path:
        return None
    from desktop_app.core.catalogue import fit
    from desktop_app.core.catalogue.gguf_meta import GgufError, read_gguf

    try:
        info = read_gguf(Path(entry.path))
    except (GgufError, OSError):
        return None
    return fit.estimate_memory(info, entry.context_size).at_load


def _free_memory() -> int | None:
    from desktop_app.core.catalogue import fit

    return fit.available_memory()


class Residency:
    """Tracks use of the registry's models and unloads what is not needed."""

    def __init__(self, registry: Callable[[], ModelRegistry], *,
                 idle_seconds: float = IDLE_SECONDS,
                 free_memory: Callable[[], int | None] = _free_memory) -> None:
        self._registry = registry
        self.idle_seconds = idle_seconds
        self._free_memory = free_memory
        self._last_used: dict[str, float] = {}

    def used(self, name: str) -> None:
        """``name`` was just used (loaded, answered, measured)."""
        self._last_used[name] = time.monotonic()

    def _candidates(self, keep: set[str]) -> list[str]:
        """Loaded models that may go, least recently used first."""
        registry = self._registry()
        names = [n for n in registry.loaded() if n not in keep]
        busy = {n for n in names if getattr(registry.get(n), "busy", False)}
        return sorted((n for n in names if n not in busy),
                      key=lambda n: self._last_used.get(n, 0.0))

    async def make_room(self, name: str, keep: frozenset[str] | set[str] = frozenset()) -> list[str]:
        """Before ``name`` loads: unload least recently used models until it fits in the
        memory free now. Returns the names unloaded (none if it fits, or if its need or
        the free memory is unknown)."""
        registry = self._registry()
        if name in registry.loaded():
            return []
        needed = await asyncio.to_thread(memory_needed, registry.entry(name))
        if needed is None:
            return []
        unloaded: list[str] = []
        for victim in self._candidates({name, *keep}):
            free = self._free_memory()
            if free is None or free >= needed:
                break
            await registry.unload(victim)
            unloaded.append(victim)
        return unloaded

    def shortfall(self, names: list[str]) -> tuple[int, int] | None:
        """Can ``names`` be in memory together? (needed, available) when they cannot:
        ``available`` is what is free now plus what unloading the other loaded models
        would free. None when they fit or it is not known (blocking: reads headers)."""
        registry = self._registry()
        loaded = set(registry.loaded())
        needs = [memory_needed(registry.entry(n)) for n in names if n not in loaded]
        needed = sum(n for n in needs if n)
        free = self._free_memory()
        if not needed or free is None:
            return None
        freeable = sum(memory_needed(registry.entry(n)) or 0 for n in loaded - set(names))
        return (needed, free + freeable) if needed > free + freeable else None

    async def unload_idle(self, keep: frozenset[str] | set[str] = frozenset()) -> list[str]:
        """Unload every model unused for ``idle_seconds``; returns their names."""
        now = time.monotonic()
        registry = self._registry()
        gone = []
        for name in self._candidates(set(keep)):
            if now - self._last_used.get(name, now) >= self.idle_seconds:
                await registry.unload(name)
                gone.append(name)
        return gone
