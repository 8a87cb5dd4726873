"""The Compare window: one prompt, several models side by side, through the real engine.

Real widgets (offscreen), the real ReActAgent/compare_models and a real store; the models
are scripted fakes registered in a real ModelRegistry.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Iterator
from itertools import pairwise

import pytest
from PySide6.QtCore import Qt
from ui_helpers import make_window, wait_for

from desktop_app.core.config.settings import Settings
from desktop_app.core.errors import LLMConnectionError, ModelFileError
from desktop_app.core.llm.registry import ModelEntry, ModelRegistry
from desktop_app.core.llm.testing import FunctionLLM, Request, ScriptedLLM, json_action, json_final
from desktop_app.core.store.async_store import AsyncStore
from desktop_app.ui.app_context import AppContext
from desktop_app.ui.compare_window import CompareWindow

pytestmark = pytest.mark.gui

LONG_ANSWER = " ".join(f"word{i}" for i in range(600))


def _local_entry(name: str, llm: object) -> ModelEntry:
    """A registry entry that counts as a local model (run one after another)."""
    return ModelEntry(name=name, kind="local", factory=lambda: llm,  # type: ignore[arg-type,return-value]
                      abilities=dict(llm.abilities), context_size=8192)  # type: ignore[attr-defined]


def _hosted_answer(request: Request) -> str:
    # The tool loop asks in JSON mode (chat); the final answer is streamed.
    return "Hosted says: **six times seven is 42**." if request.kind == "stream" else json_final("42")


@pytest.fixture
def open_compare(loop) -> Iterator:
    """Builds CompareWindows over a registry; stops their runs and closes them afterwards."""
    made: list[CompareWindow] = []

    def build(registry: ModelRegistry, *, size: tuple[int, int] = (1200, 800)) -> CompareWindow:
        async def make() -> CompareWindow:
            ctx = AppContext(settings=Settings(), registry=registry,
                             store=await AsyncStore.open(), persist_settings=False)
            window = CompareWindow(ctx)
            window.agent_options = {"max_iterations": 4}
            window.resize(*size)
            window.show()
            return window

        window = loop.run_until_complete(make())
        made.append(window)
        return window

    yield build
    for window in made:
        window.close()
        loop.run_until_complete(window.wait_idle())
        loop.run_until_complete(window.ctx.aclose())
        window.deleteLater()


def _registry(*models: tuple[str, object] | ModelEntry) -> ModelRegistry:
    registry = ModelRegistry()
    for model in models:
        if isinstance(model, ModelEntry):
            registry.add(model)
        else:
            registry.register(model[0], model[1])  # type: ignore[arg-type]
    return registry


def _start(window: CompareWindow, prompt: str, names: list[str]) -> None:
    window.prompt.setPlainText(prompt)
    window.set_checked(names)
    assert window.run_button.isEnabled()
    window.run_button.click()


def test_two_models_answers_and_metrics_render_in_their_columns(loop, open_compare, tmp_path) -> None:
    local = ScriptedLLM([json_action("calculator", {"expression": "6*7"}), json_final("42"),
                         "Local: the calculator says **42**.\n\n```python\nprint(6 * 7)\n```"],
                        model_id="local-gguf", delay=0.01)
    hosted = FunctionLLM(_hosted_answer, model_id="hosted-api", delay=0.01)
    window = open_compare(_registry(_local_entry("local", local), ("hosted", hosted)))

    _start(window, "What is 6*7?", ["local", "hosted"])
    assert window.stop_button.isEnabled() and not window.run_button.isEnabled()
    loop.run_until_complete(window.wait_idle())

    left, right = window.columns["local"], window.columns["hosted"]
    assert "calculator says **42**" in left.answer_text()
    assert "six times seven is 42" in right.answer_text()
    # Markdown is rendered like the chat view: no asterisks left, the code is a code block.
    prose = left.turn.answer.segment_widgets()[0].toPlainText()
    assert "42" in prose and "**" not in prose
    assert left.turn.answer.code_blocks()
    # Side by side: same top edge, the first ticked model on the left.
    assert left.geometry().top() == right.geometry().top()
    assert left.geometry().right() < right.geometry().left()
    for column, tools in ((left, "1"), (right, "0")):
        m = column.metrics
        assert re.fullmatch(r"\d+\.\d\d s", m.text("ttft")), m.text("ttft")
        assert re.fullmatch(r"\d+\.\d\d s", m.text("total")), m.text("total")
        assert re.fullmatch(r"\d+\.\d", m.text("tps")), m.text("tps")
        tokens_in, tokens_out = (int(x.replace(",", "")) for x in m.text("tokens").split(" / "))
        assert tokens_in > 0 and tokens_out > 0
        assert m.text("tools") == tools
        assert m.text("status") == "done ✓"
        assert not column.turn.errors
    assert left.turn.cards and left.turn.cards[0].tool_name == "calculator"
    assert window.run_button.isEnabled() and not window.stop_button.isEnabled()
    shot = tmp_path / "compare.png"
    assert window.grab().save(str(shot)) and shot.stat().st_size > 10_000


def test_a_failing_model_shows_its_error_while_the_other_completes(loop, open_compare) -> None:
    broken = ScriptedLLM([LLMConnectionError("The model server at http://x could not be reached.",
                                             hint="Start the server or check the base URL.")],
                         model_id="broken")
    hosted = FunctionLLM(_hosted_answer, model_id="hosted-api", delay=0.02)
    window = open_compare(_registry(("broken", broken), ("hosted", hosted)))

    _start(window, "What is 6*7?", ["broken", "hosted"])
    loop.run_until_complete(window.wait_idle())

    failed, fine = window.columns["broken"], window.columns["hosted"]
    assert failed.status == "error"
    assert failed.metrics.text("status") == "failed ⚠"
    assert any("could not be reached" in e and "check the base URL" in e
               for e in failed.error_texts())
    assert failed.turn.errors[0].isVisible()
    assert fine.status == "done" and "six times seven is 42" in fine.answer_text()
    assert not fine.turn.errors


def test_a_model_that_cannot_load_fails_in_its_own_column(loop, open_compare) -> None:
    def missing():
        raise ModelFileError("The model file /models/gone.gguf does not exist.",
                             hint="Pick the file again in Settings → Models.")

    gone = ModelEntry(name="gone", kind="local", factory=missing,
                      abilities={"streaming": True}, context_size=4096)
    hosted = FunctionLLM(_hosted_answer, model_id="hosted-api")
    window = open_compare(_registry(gone, ("hosted", hosted)))

    _start(window, "hi", ["gone", "hosted"])
    loop.run_until_complete(window.wait_idle())

    assert window.columns["gone"].status == "error"
    assert any("does not exist" in e and "Settings → Models" in e
               for e in window.columns["gone"].error_texts())
    assert window.columns["hosted"].status == "done"


@pytest.mark.parametrize("how", ["button", "escape"])
def test_stop_cancels_every_model_and_keeps_what_was_written(loop, open_compare, qtbot, how) -> None:
    # Two local models: the second waits for the first, so Stop also ends one not yet started.
    first = ScriptedLLM([json_final("long"), LONG_ANSWER], model_id="first", chunk_size=6,
                        delay=0.02)
    second = ScriptedLLM([json_final("long"), LONG_ANSWER], model_id="second", chunk_size=6,
                         delay=0.02)
    hosted = ScriptedLLM([json_final("long"), LONG_ANSWER], model_id="hosted", chunk_size=6,
                         delay=0.02)
    window = open_compare(_registry(_local_entry("first", first), _local_entry("second", second),
                                    ("hosted", hosted)))

    _start(window, "write a lot", ["first", "second", "hosted"])

    async def scenario() -> float:
        await wait_for(lambda: len(window.columns["first"].answer_text()) > 100
                       and len(window.columns["hosted"].answer_text()) > 100, timeout=20)
        stopped_at = time.perf_counter()
        if how == "button":
            window.stop_button.click()
        else:
            qtbot.keyClick(window.prompt, Qt.Key.Key_Escape)
        await window.wait_idle()
        return time.perf_counter() - stopped_at

    took = loop.run_until_complete(scenario())
    assert took < 1.0
    columns = window.columns
    assert [c.status for c in columns.values()] == ["stopped", "stopped", "stopped"]
    assert columns["second"].metrics.text("status") == "not started"
    assert second.requests == []
    for name in ("first", "hosted"):
        partial = columns[name].answer_text()
        assert 100 < len(partial) < len(LONG_ANSWER)
        assert re.fullmatch(r"\d+\.\d\d s", columns[name].metrics.text("total"))
    requests = len(first.requests) + len(hosted.requests)
    loop.run_until_complete(asyncio.sleep(0.2))
    assert len(first.requests) + len(hosted.requests) == requests  # nothing runs on
    assert window.run_button.isEnabled() and not window.stop_button.isEnabled()
    assert not window.running


def test_run_is_disabled_until_two_models_and_a_prompt(loop, open_compare) -> None:
    a = ScriptedLLM(default="a", model_id="a")
    b = ScriptedLLM(default="b", model_id="b")
    window = open_compare(_registry(("a", a), ("b", b)))

    assert not window.run_button.isEnabled() and "at least two" in window.hint.text()
    window.set_checked(["a"])
    window.prompt.setPlainText("hello")
    assert not window.run_button.isEnabled()
    assert "Tick at least two models" in window.hint.text() and "1 ticked" in window.hint.text()
    assert window.run() is None and not window.columns  # nothing starts
    window.set_checked(["a", "b"])
    window.prompt.setPlainText("   ")
    assert not window.run_button.isEnabled() and "Type the prompt" in window.hint.text()
    window.prompt.setPlainText("hello")
    assert window.run_button.isEnabled() and "Ready: 2 models" in window.hint.text()


def test_with_a_single_configured_model_the_hint_says_to_add_one(loop, open_compare) -> None:
    window = open_compare(_registry(("only", ScriptedLLM(default="x", model_id="only"))))
    window.set_checked(["only"])
    window.prompt.setPlainText("hello")
    assert not window.run_button.isEnabled()
    assert "add a local GGUF or a hosted API in Settings" in window.hint.text()


def test_model_list_shows_where_each_model_runs_and_its_abilities(loop, open_compare) -> None:
    local = ScriptedLLM(default="x", model_id="l")
    hosted = ScriptedLLM(default="x", model_id="h", tool_call=True)
    window = open_compare(_registry(_local_entry("local", local), ("hosted", hosted)))
    texts = [window.models.item(i).text() for i in range(window.models.count())]
    assert "local GGUF" in texts[0] and "tools via JSON replies" in texts[0]
    assert "native tool calls" in texts[1]


def test_long_model_names_elide_and_a_long_answer_scrolls_in_its_column(loop, open_compare) -> None:
    long_name = "org/" + "very-long-model-name-" * 6 + "Q4_K_M.gguf"
    a = ScriptedLLM([json_final("x"), LONG_ANSWER], model_id="a", chunk_size=400)
    b = ScriptedLLM([json_final("x"), "short"], model_id="b")
    window = open_compare(_registry((long_name, a), ("b", b)), size=(900, 600))

    _start(window, "go", [long_name, "b"])
    loop.run_until_complete(window.wait_idle())
    loop.run_until_complete(asyncio.sleep(0.1))  # let the answer lay itself out

    column = window.columns[long_name]
    assert column.title.text().endswith("…") and column.title.full_text() == long_name
    assert column.title.toolTip().startswith(long_name)
    bar = column.answer_scroll.verticalScrollBar()
    assert bar.maximum() > 0  # the answer scrolls inside its column ...
    assert window.height() <= 600  # ... instead of growing the window
    assert window.columns["b"].answer_scroll.verticalScrollBar().maximum() == 0


def test_main_window_opens_compare_with_its_models(qtbot, loop) -> None:
    a = ScriptedLLM(default="a", model_id="model-a")
    b = ScriptedLLM(default="b", model_id="model-b")

    async def scenario():
        window = await make_window(qtbot, a, b)
        window.compare_button.click()
        await wait_for(lambda: getattr(window, "compare_window", None) is not None)
        return window

    window = loop.run_until_complete(scenario())
    compare = window.compare_window
    assert compare.isVisible() and compare.windowTitle() == "Compare models"
    assert [compare.models.item(i).data(Qt.ItemDataRole.UserRole)
            for i in range(compare.models.count())] == ["model-a", "model-b"]
    window.open_compare()  # opening again shows the same window
    assert window.compare_window is compare
    window.close()
    assert not compare.isVisible()


def test_ctrl_shift_m_opens_compare(qtbot, loop) -> None:
    a = ScriptedLLM(default="a", model_id="model-a")
    b = ScriptedLLM(default="b", model_id="model-b")
    window = loop.run_until_complete(make_window(qtbot, a, b))
    window.activateWindow()
    qtbot.keyClick(window, Qt.Key.Key_M,
                   Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
    compare = getattr(window, "compare_window", None)
    assert compare is not None and compare.isVisible()


@pytest.mark.real_model
def test_real_local_model_and_real_hosted_server_side_by_side(qtbot, loop, openai_server,
                                                             bundled_model_path) -> None:
    """The bundled GGUF (llama.cpp, loaded by the main window's controller) against the
    loopback OpenAI-compatible server, with the Qt thread staying responsive meanwhile."""
    from PySide6.QtCore import QTimer

    from desktop_app.core.config.settings import EndpointModelConfig
    from desktop_app.core.llm.factory import build_registry

    settings = Settings(endpoints=[EndpointModelConfig(name="server", base_url=openai_server.base_url,
                                                  model=openai_server.model, context_size=4096)])

    async def scenario():
        window = await make_window(qtbot)
        window.ctx.registry = build_registry(settings)
        window.open_compare()
        compare = window.compare_window
        compare.agent_options = {"max_iterations": 2, "max_tokens": 96, "synthesis_max_tokens": 48}
        local = next(e.name for e in window.ctx.registry.entries() if e.kind == "bundled")
        compare.prompt.setPlainText("What is 12 times 12? Answer with the number.")
        compare.set_checked([local, "server"])
        ticks: list[float] = []
        timer = QTimer()
        timer.setInterval(10)
        timer.timeout.connect(lambda: ticks.append(time.perf_counter()))
        timer.start()
        compare.run_button.click()
        await asyncio.wait_for(compare.wait_idle(), 300)
        timer.stop()
        await window.ctx.registry.aclose()
        return compare, local, ticks

    compare, local, ticks = loop.run_until_complete(scenario())
    for name in (local, "server"):
        column = compare.columns[name]
        assert column.status == "done", column.error_texts()
        assert column.answer_text().strip()
        assert re.fullmatch(r"\d+\.\d\d s", column.metrics.text("total"))
        assert int(column.metrics.text("tokens").split(" / ")[1].replace(",", "")) > 0
        print(name, {k: column.metrics.text(k) for k in ("ttft", "tps", "total", "tokens")})
    gaps = sorted(b - a for a, b in pairwise(ticks))
    assert gaps[int(0.99 * (len(gaps) - 1))] < 0.25  # generous: a shared, loaded machine


def test_evaluate_runs_a_suite_on_the_ticked_models_and_shows_a_scoreboard(
        loop, open_compare, tmp_path) -> None:
    import json

    from desktop_app.core.evals import load_suite

    suite_file = tmp_path / "suite.json"
    suite_file.write_text(json.dumps({"name": "mini", "version": 1, "tasks": [
        {"id": "capital", "category": "no_tool", "prompt": "Capital of France?",
         "needs_tool": False, "expect": {"answer": {"contains": ["paris"]}}},
        {"id": "colour", "category": "no_tool", "prompt": "Colour of the sky?",
         "needs_tool": False, "expect": {"answer": {"contains": ["blue"]}}}]}))

    def knows(request: Request) -> str:  # answers both right (as text: no tool needed)
        text = request.messages[-1].content.lower()
        return "Paris." if "france" in text else "Blue."

    registry = _registry(("right", FunctionLLM(knows, tool_call=True)),
                         ("wrong", FunctionLLM(lambda r: "No idea.", tool_call=True)))
    window = open_compare(registry)
    window.eval_panel.suite = load_suite(suite_file)
    window.set_checked(["right", "wrong"])
    assert window.eval_button.isEnabled()
    # The first press shows what would run and how long it takes; nothing starts.
    window.eval_button.click()
    assert window.task is None or window.task.done()
    assert window.tabs.currentWidget() is window.eval_panel
    assert "run 2 tasks on 2 models" in window.eval_panel.progress.text()
    window.eval_button.click()
    loop.run_until_complete(window.wait_idle())
    table = window.eval_panel.table
    headers = [table.horizontalHeaderItem(i).text() for i in range(table.columnCount())]
    rows = [table.verticalHeaderItem(i).text() for i in range(table.rowCount())]
    assert headers == ["right", "wrong"] and rows[0] == "no tool"
    assert table.item(0, 0).text().startswith("2/2") and table.item(0, 1).text().startswith("0/2")
    assert window.tabs.currentWidget() is window.eval_panel
    runs = loop.run_until_complete(window.ctx.store.list_eval_runs())
    assert sorted((r.model, r.passed, r.total) for r in runs) == [("right", 2, 2), ("wrong", 0, 2)]


def test_evaluate_both_splits_shows_a_column_per_model_and_split(
        loop, open_compare, tmp_path) -> None:
    import json

    from desktop_app.core.evals import load_suite

    suite_file = tmp_path / "suite.json"
    suite_file.write_text(json.dumps({"name": "mini", "version": 1, "tasks": [
        {"id": "capital", "category": "no_tool", "prompt": "Capital of France?",
         "needs_tool": False, "expect": {"answer": {"contains": ["paris"]}}},
        {"id": "capitale", "category": "no_tool", "prompt": "Capitale de la France ?",
         "needs_tool": False, "split": "heldout", "language": "fr",
         "expect": {"answer": {"contains": ["paris"]}}}]}))
    registry = _registry(("m", FunctionLLM(lambda r: "Paris.", tool_call=True)))
    window = open_compare(registry)
    window.eval_panel.suite = load_suite(suite_file)
    window.eval_panel.split.setCurrentIndex(window.eval_panel.split.findData(None))
    window.set_checked(["m"])
    window.tabs.setCurrentWidget(window.eval_panel)  # the choices are on screen: it runs
    window.eval_button.click()
    loop.run_until_complete(window.wait_idle())
    table = window.eval_panel.table
    headers = [table.horizontalHeaderItem(i).text() for i in range(table.columnCount())]
    rows = [table.verticalHeaderItem(i).text() for i in range(table.rowCount())]
    assert headers == ["m · dev", "m · heldout"]
    language_row = rows.index("other languages")
    assert table.item(language_row, 0).text() == "–"
    assert table.item(language_row, 1).text().startswith("1/1")
