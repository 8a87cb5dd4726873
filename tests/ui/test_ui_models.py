"""The Models window on real widgets: installed models with their fit, a dropped GGUF
added where it lies, the recommended list, a search and download against a loopback hub,
and removal with the space it frees."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from hub_fakes import FakeHub, HubFile, serve_hub, write_tiny_gguf
from PySide6.QtCore import QMimeData, QPoint, QPointF, Qt, QUrl
from PySide6.QtGui import QDragEnterEvent, QDropEvent
from PySide6.QtWidgets import QApplication, QMessageBox
from ui_helpers import make_window, wait_for

from desktop_app.core.catalogue.library import downloads_dir
from desktop_app.core.config.settings import Settings, load_settings
from desktop_app.core.llm.testing import ScriptedLLM

pytestmark = pytest.mark.gui


def _drop(widget, path: Path) -> None:
    """A drag that enters the window, then drops (Qt ignores a drop nothing entered)."""
    data = QMimeData()
    data.setUrls([QUrl.fromLocalFile(str(path))])
    enter = QDragEnterEvent(QPoint(50, 50), Qt.DropAction.CopyAction, data,
                            Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier)
    QApplication.sendEvent(widget, enter)
    assert enter.isAccepted()
    event = QDropEvent(QPointF(QPoint(50, 50)), Qt.DropAction.CopyAction, data,
                       Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier)
    QApplication.sendEvent(widget, event)


def _texts(table, column: int) -> list[str]:
    return [table.item(row, column).text() for row in range(table.rowCount())]


def test_a_dropped_gguf_is_added_and_listed_with_its_fit(loop, qtbot, tmp_path: Path) -> None:
    async def scenario() -> None:
        window = await make_window(qtbot, ScriptedLLM(["hi"]))
        window.ctx.persist_settings = True
        model = write_tiny_gguf(tmp_path / "my-model-Q4_K_M.gguf")
        _drop(window, model)
        models = window.models_window
        await wait_for(lambda: "my-model-q4_k_m" in _texts(models.installed, 0))
        await wait_for(lambda: bool(load_settings().local_models))  # saved off the Qt thread
        [config] = load_settings().local_models
        assert Path(config.path) == model.resolve()  # not copied
        row = _texts(models.installed, 0).index("my-model-q4_k_m")
        assert models.installed.item(row, 2).text() == "Q4_K_M"
        assert models.installed.item(row, 4).text().startswith("fits")
        picker = window.picker.combo
        assert "my-model-q4_k_m" in [picker.itemData(i) for i in range(picker.count())]
        # A file that is not a model: a clear message, nothing added.
        bad = tmp_path / "broken.gguf"
        bad.write_bytes(b"not a model")
        _drop(window, bad)
        await wait_for(lambda: "cannot be added" in models.message.text())
        assert len(load_settings().local_models) == 1

    loop.run_until_complete(scenario())


def test_recommended_models_show_size_licence_tools_and_fit(loop, qtbot) -> None:
    async def scenario() -> None:
        window = await make_window(qtbot, ScriptedLLM(["hi"]))
        window.open_models()
        tab = window.models_window.recommended
        names = _texts(tab.table, 0)
        assert len(names) >= 10 and "Qwen2.5 7B Instruct" in names
        assert set(_texts(tab.table, 3)) == {"yes", "no"}
        verdicts = {text.split(" (")[0] for text in _texts(tab.table, 5)}
        assert verdicts <= {"fits", "tight", "does not fit"} and verdicts
        assert "MiB" in tab.table.item(0, 5).toolTip()  # the numbers behind the verdict

    loop.run_until_complete(scenario())


def test_search_download_and_remove_through_a_loopback_hub(
        loop, qtbot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    files = tmp_path / "hub"
    files.mkdir()
    hub = FakeHub(repos={"acme/Tiny-GGUF": {"tiny-Q4_K_M.gguf": HubFile(
        write_tiny_gguf(files / "tiny-Q4_K_M.gguf", data_bytes=4 * 1024 * 1024))}})
    hub.drop_after = [1024 * 1024]  # the transfer is interrupted once and resumes

    async def scenario(served: FakeHub) -> None:
        monkeypatch.setenv("HF_ENDPOINT", served.url)
        window = await make_window(qtbot, ScriptedLLM(["hi"]))
        window.open_models()
        models = window.models_window
        search = models.search
        models.tabs.setCurrentWidget(search)
        search.query.setText("tiny")
        qtbot.mouseClick(search.search_button, Qt.MouseButton.LeftButton)
        await wait_for(lambda: search.repos.count() == 1)
        search.repos.setCurrentRow(0)
        await wait_for(lambda: search.files.rowCount() == 1)
        search.files.selectRow(0)
        qtbot.mouseClick(search.download_button, Qt.MouseButton.LeftButton)
        await wait_for(lambda: "tiny-q4_k_m" in _texts(models.installed, 0), timeout=30)
        assert "Added 'tiny-q4_k_m'" in models.message.text()
        pulled = downloads_dir() / "acme--Tiny-GGUF" / "tiny-Q4_K_M.gguf"
        assert pulled.exists() and not list(pulled.parent.glob("*.part"))
        ranges = [r for _m, p, r in served.requests if p.endswith("tiny-Q4_K_M.gguf")]
        assert len(ranges) == 2 and ranges[1].startswith("bytes=")
        # Remove it: the app downloaded it, so the file goes and the space is reported.
        row = _texts(models.installed, 0).index("tiny-q4_k_m")
        models.tabs.setCurrentIndex(0)
        models.installed.selectRow(row)
        monkeypatch.setattr(QMessageBox, "question",
                            lambda *_a, **_k: QMessageBox.StandardButton.Yes)
        qtbot.mouseClick(models.remove_button, Qt.MouseButton.LeftButton)
        await wait_for(lambda: "freed" in models.message.text())
        assert not pulled.exists() and load_settings().local_models == []

    for served in serve_hub(hub):
        loop.run_until_complete(scenario(served))


def test_measured_speeds_show_in_the_picker_and_compare(loop, qtbot, tmp_path: Path) -> None:
    from desktop_app.core.catalogue.bench import model_key
    from desktop_app.core.config.settings import LocalModelConfig, Settings

    model = write_tiny_gguf(tmp_path / "fast-Q4_K_M.gguf")
    settings = Settings(local_models=[LocalModelConfig(name="fast", path=str(model))])

    async def scenario() -> None:
        window = await make_window(qtbot, ScriptedLLM(["hi"]), settings=settings)
        await window.ctx.store.save_benchmark(
            model_key=model_key(model), model_name="fast", results={
                "load_seconds": 0.5, "prompt_tokens": 300, "prompt_tokens_per_second": 210.0,
                "first_token_seconds": 1.6, "generated_tokens": 64,
                "generation_tokens_per_second": 18.4, "context_size": 2048, "threads": 2})
        await window.apply_settings(settings)  # the registry now lists "fast"
        await wait_for(lambda: "fast" in window.picker.speeds)
        combo = window.picker.combo
        tip = combo.itemData(combo.findData("fast"), Qt.ItemDataRole.ToolTipRole)
        assert "writes 18.4 tok/s" in tip and "first token 1.6 s" in tip
        window.open_compare()
        items = [window.compare_window.models.item(i).text()
                 for i in range(window.compare_window.models.count())]
        assert any("fast" in text and "18.4 tok/s" in text for text in items)

    loop.run_until_complete(scenario())


def test_models_in_memory_are_marked_running(loop, qtbot) -> None:
    async def scenario() -> None:
        llm = ScriptedLLM(["Hello there."])
        window = await make_window(qtbot, llm)
        assert window.controller.loaded_models() == set()
        await window.send("hi")
        await wait_for(lambda: window.controller.active is None and
                       llm.model_id in window.controller.loaded_models())
        # The bundled model's row, as the main window's controller would report it running.
        from desktop_app.ui.models_window import ModelsWindow

        models = ModelsWindow(window.ctx, window, running=lambda: {"qwen2.5-coder-0.5b"})
        await models.refresh()
        [state] = _texts(models.installed, 1)
        assert state.startswith("in memory")
        models.close()

    loop.run_until_complete(scenario())


@pytest.mark.real_model
def test_measure_speed_uses_the_chats_copy_and_can_be_stopped(loop, qtbot,
                                                              bundled_model_path) -> None:
    """"Measure speed" loaded a second full copy beside the chat's and could not be
    cancelled; it now measures the registry's copy, after the answer, and stops on a click."""
    from desktop_app.core.llm.factory import build_registry
    from desktop_app.ui.models_window import open_models_window

    async def scenario() -> None:
        window = await make_window(qtbot)
        window.ctx.registry = build_registry(Settings())
        window.controller.agent_options = {"max_iterations": 1, "max_tokens": 24,
                                           "synthesis_max_tokens": 24}
        name = next(e.name for e in window.ctx.registry.entries() if e.kind == "bundled")
        window.picker.set_registry(window.ctx.registry, name)
        await window.send("Say hello.")
        await asyncio.wait_for(window.controller.wait_idle(), 120)
        llm = window.ctx.registry.get(name)
        assert llm.loaded
        loaded_by, load_seconds = llm.load_thread_id, llm.load_seconds
        models = open_models_window(window)
        await models.refresh()
        row = [r.name for r in models.rows].index(name)
        models.installed.selectRow(row)
        assert _texts(models.installed, 1)[row].startswith("in memory")
        # Stopped at once: nothing saved.
        models.bench_button.click()
        assert models.bench_button.text() == "Stop measuring"
        models.bench_button.click()
        await wait_for(lambda: "was stopped" in models.message.text(), timeout=60)
        assert await window.ctx.store.latest_benchmarks() == {}
        # Measured on the same copy: no second load.
        models.bench_button.click()
        await wait_for(lambda: "writes at" in models.message.text(), timeout=120)
        assert window.ctx.registry.get(name) is llm and llm.loaded
        assert (llm.load_thread_id, llm.load_seconds) == (loaded_by, load_seconds)
        [stored] = (await window.ctx.store.latest_benchmarks()).values()
        assert stored.results["generated_tokens"] == 64
        assert stored.results["load_seconds"] == round(load_seconds, 3)
        # The chat still answers on that copy afterwards.
        await window.send("Say hello again.")
        await asyncio.wait_for(window.controller.wait_idle(), 120)
        assert window.controller.active is None
        models.close()
        await window.ctx.registry.aclose()

    loop.run_until_complete(scenario())
