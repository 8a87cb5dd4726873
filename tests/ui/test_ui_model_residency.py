"""The window keeps one copy of each model and unloads the least recently used one when
the next would not fit beside it; the Models window shows what is in memory."""

from __future__ import annotations

import asyncio

import pytest
from ui_helpers import make_window

from desktop_app.core.llm import residency as residency_module
from desktop_app.core.llm.registry import ModelEntry, ModelRegistry
from desktop_app.core.llm.testing import ScriptedLLM

pytestmark = pytest.mark.gui
GB = 1 << 30


class LoadableLLM(ScriptedLLM):
    """A scripted model that holds ``size`` bytes of the machine's memory while loaded."""

    def __init__(self, size: int, machine: dict[str, int], **kwargs: object) -> None:
        super().__init__(default="Fine.", **kwargs)  # type: ignore[arg-type]
        self.size, self.machine, self.loaded, self.loads = size, machine, False, 0

    async def load(self) -> None:
        self.loaded = True
        self.loads += 1
        self.machine["free"] -= self.size

    async def aclose(self) -> None:
        if self.loaded:
            self.machine["free"] += self.size
        self.loaded = False


def _local_models(sizes: dict[str, int], machine: dict[str, int],
                  monkeypatch: pytest.MonkeyPatch) -> tuple[ModelRegistry, list[LoadableLLM]]:
    """A registry of local models of ``sizes`` (each holds that much of ``machine`` while
    loaded, its fit estimate says the same), and the list of every copy built."""
    made: list[LoadableLLM] = []

    def factory(name: str) -> LoadableLLM:
        made.append(LoadableLLM(sizes[name], machine, model_id=name))
        return made[-1]

    registry = ModelRegistry()
    for name in sizes:
        registry.add(ModelEntry(name=name, kind="local", factory=lambda n=name: factory(n),
                                abilities={"streaming": True}, context_size=4096,
                                path=f"/models/{name}.gguf"))
    monkeypatch.setattr(residency_module, "memory_needed", lambda entry: sizes[entry.name])
    return registry, made


def test_switching_to_a_model_that_does_not_fit_unloads_the_other(
        qtbot, loop, monkeypatch: pytest.MonkeyPatch) -> None:
    machine = {"free": 10 * GB}
    registry, made = _local_models({"first": 6 * GB, "second": 6 * GB}, machine, monkeypatch)

    async def scenario() -> None:
        window = await make_window(qtbot)
        window.ctx.registry = registry
        window.ctx.residency._free_memory = lambda: machine["free"]
        statuses: list[str] = []
        window.controller.model_status.connect(statuses.append)
        window.picker.set_registry(registry, "first")
        await window.send("Hello")
        await window.controller.wait_idle()
        assert registry.loaded() == ["first"]
        window.picker.set_registry(registry, "second")
        await window.send("Hello again")
        await window.controller.wait_idle()
        # Only 4 GB were free beside "first": it went, "second" came; one copy each.
        assert registry.loaded() == ["second"] and machine["free"] == 4 * GB
        assert "Unloaded first to make room for second…" in statuses
        assert window.controller.loaded_models() == {"second"}
        window.open_models()
        models = window.models_window
        # Going back builds and loads "first" again (after unloading "second").
        window.picker.set_registry(registry, "first")
        await window.send("And back")
        await window.controller.wait_idle()
        assert registry.loaded() == ["first"]
        assert [llm.model_id for llm in made].count("first") == 2
        assert sum(llm.loads for llm in made) == 3
        await models.refresh()
        assert models.running() | set(registry.loaded()) >= {"first"}
        await asyncio.sleep(0)

    loop.run_until_complete(scenario())


def test_compare_says_before_loading_that_the_ticked_models_do_not_fit(
        qtbot, loop, monkeypatch: pytest.MonkeyPatch) -> None:
    machine = {"free": 10 * GB}
    registry, made = _local_models({"first": 6 * GB, "second": 6 * GB, "small": 1 * GB},
                                   machine, monkeypatch)

    async def scenario() -> None:
        window = await make_window(qtbot)
        window.ctx.registry = registry
        window.ctx.residency._free_memory = lambda: machine["free"]
        window.open_compare()
        compare = window.compare_window
        compare.prompt.setPlainText("Hello")
        compare.set_checked(["first", "second"])
        await compare.run()
        for name in ("first", "second"):
            text = " ".join(compare.columns[name].error_texts())
            assert "Not enough memory" in text and "12.00 GiB" in text, text
        assert made == []  # nothing was loaded
        compare.set_checked(["first", "small"])  # 7 GB of 10: both load and stay
        await compare.run()
        assert sorted(registry.loaded()) == ["first", "small"]
        assert all(compare.columns[n].status == "done" for n in ("first", "small"))

    loop.run_until_complete(scenario())
