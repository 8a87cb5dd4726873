"""Which models stay loaded: least recently used unloaded first when the next one would
not fit (measured free memory against its fit estimate), idle ones unloaded, models in
use never."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from hub_fakes import write_tiny_gguf

from desktop_app.core.llm import residency as residency_module
from desktop_app.core.llm.registry import ModelEntry, ModelRegistry
from desktop_app.core.llm.residency import Residency, memory_needed

GB = 1 << 30


class FakeLocal:
    """Holds ``size`` bytes while loaded; frees them on aclose."""

    def __init__(self, name: str, size: int, machine: dict[str, int]) -> None:
        self.model_id, self.size, self.machine = name, size, machine
        self.loaded = False
        self.busy = False
        self.abilities: dict[str, bool] = {}
        self.context_size = 2048

    def load(self) -> None:
        self.loaded = True
        self.machine["free"] -= self.size

    async def aclose(self) -> None:
        if self.loaded:
            self.machine["free"] += self.size
        self.loaded = False


def _world(sizes: dict[str, int], free: int, monkeypatch: pytest.MonkeyPatch
           ) -> tuple[ModelRegistry, Residency, dict[str, int], dict[str, FakeLocal]]:
    machine = {"free": free}
    models = {name: FakeLocal(name, size, machine) for name, size in sizes.items()}
    registry = ModelRegistry()
    for name, llm in models.items():
        registry.add(ModelEntry(name=name, kind="local", factory=lambda llm=llm: llm,
                                abilities={}, context_size=2048, path=f"/models/{name}.gguf"))
    monkeypatch.setattr(residency_module, "memory_needed",
                        lambda entry: sizes[entry.name])
    return registry, Residency(lambda: registry, free_memory=lambda: machine["free"]), \
        machine, models


def _load(registry: ModelRegistry, residency: Residency, name: str) -> None:
    llm = registry.get(name)
    llm.load()  # type: ignore[attr-defined]
    residency.used(name)


def test_least_recently_used_go_first_and_only_as_many_as_needed(
        monkeypatch: pytest.MonkeyPatch) -> None:
    registry, residency, machine, models = _world(
        {"a": 4 * GB, "b": 4 * GB, "c": 4 * GB, "big": 9 * GB}, free=14 * GB,
        monkeypatch=monkeypatch)
    for name in ("a", "b", "c"):
        _load(registry, residency, name)
    residency.used("a")  # a used again: b is now the oldest
    assert machine["free"] == 2 * GB
    gone = asyncio.run(residency.make_room("big"))
    assert gone == ["b", "c"]  # 2 + 4 + 4 = 10 GB >= 9; a (used last) stays
    assert models["a"].loaded and not models["b"].loaded and not models["c"].loaded
    assert sorted(registry.loaded()) == ["a"]


def test_nothing_is_unloaded_when_the_model_fits_or_is_loaded(
        monkeypatch: pytest.MonkeyPatch) -> None:
    registry, residency, _machine, models = _world({"a": 1 * GB, "b": 1 * GB}, free=8 * GB,
                                                   monkeypatch=monkeypatch)
    _load(registry, residency, "a")
    assert asyncio.run(residency.make_room("b")) == []
    assert asyncio.run(residency.make_room("a")) == []
    assert models["a"].loaded


def test_a_model_in_use_or_answering_is_never_unloaded(monkeypatch: pytest.MonkeyPatch) -> None:
    registry, residency, _machine, models = _world(
        {"a": 4 * GB, "b": 4 * GB, "big": 12 * GB}, free=9 * GB, monkeypatch=monkeypatch)
    _load(registry, residency, "a")
    _load(registry, residency, "b")
    models["a"].busy = True
    assert asyncio.run(residency.make_room("big", keep={"b"})) == []  # it will not fit
    assert models["a"].loaded and models["b"].loaded


def test_models_idle_too_long_are_unloaded(monkeypatch: pytest.MonkeyPatch) -> None:
    registry, residency, _machine, models = _world({"a": GB, "b": GB}, free=8 * GB,
                                                   monkeypatch=monkeypatch)
    _load(registry, residency, "a")
    _load(registry, residency, "b")
    residency.idle_seconds = 3600
    assert asyncio.run(residency.unload_idle()) == []
    residency.idle_seconds = 0
    assert asyncio.run(residency.unload_idle(keep={"b"})) == ["a"]
    assert not models["a"].loaded and models["b"].loaded
    assert registry.get("a") is models["a"]  # built again on the next use


def test_the_need_comes_from_the_files_header(tmp_path: Path) -> None:
    small = write_tiny_gguf(tmp_path / "small.gguf", data_bytes=1 << 20)
    large = write_tiny_gguf(tmp_path / "large.gguf", data_bytes=8 << 20)

    def entry(path: Path, context: int) -> ModelEntry:
        return ModelEntry(name=path.stem, kind="local", factory=lambda: None,  # type: ignore[arg-type, return-value]
                          abilities={}, context_size=context, path=str(path))

    need_small, need_large = memory_needed(entry(small, 2048)), memory_needed(entry(large, 2048))
    assert need_small is not None and need_large is not None
    assert need_small > 1 << 20 and need_large - need_small >= 7 << 20
    assert memory_needed(entry(small, 8192)) > need_small  # more context, more memory
    assert memory_needed(entry(tmp_path / "gone.gguf", 2048)) is None
