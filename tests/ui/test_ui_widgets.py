"""Smaller behaviours: keys in the composer, dividers, model-loading progress, real model."""

from __future__ import annotations

import asyncio
import itertools
import time

import pytest
from PySide6.QtCore import Qt, QTimer
from ui_helpers import make_window, wait_for

from desktop_app.core.agent.events import Compact, Done, ThinkingStart
from desktop_app.core.llm.testing import ScriptedLLM, json_final
from desktop_app.core.llm.types import RunMetrics, Usage
from desktop_app.ui.composer import Composer
from desktop_app.ui.message_widgets import AssistantTurn
from desktop_app.ui.run_render import apply_event

pytestmark = pytest.mark.gui


def test_enter_sends_and_shift_enter_adds_a_line(qtbot) -> None:
    composer = Composer()
    qtbot.addWidget(composer)
    sent: list[str] = []
    composer.send_requested.connect(sent.append)
    qtbot.keyClicks(composer.input, "first line")
    qtbot.keyClick(composer.input, Qt.Key.Key_Return, Qt.KeyboardModifier.ShiftModifier)
    qtbot.keyClicks(composer.input, "second line")
    assert sent == []
    height_two_lines = composer.input.height()
    qtbot.keyClick(composer.input, Qt.Key.Key_Return)
    assert sent == ["first line\nsecond line"]
    assert composer.input.toPlainText() == ""
    assert composer.input.height() < height_two_lines  # shrinks back to one line


def test_sending_while_running_emits_an_interrupt(qtbot) -> None:
    composer = Composer()
    qtbot.addWidget(composer)
    interrupts: list[str] = []
    stops: list[bool] = []
    composer.interrupt_requested.connect(interrupts.append)
    composer.stop_requested.connect(lambda: stops.append(True))
    composer.set_running(True)
    qtbot.keyClicks(composer.input, "also this")
    qtbot.keyClick(composer.input, Qt.Key.Key_Return)
    qtbot.keyClick(composer.input, Qt.Key.Key_Escape)
    assert interrupts == ["also this"] and stops == [True]


def test_compact_event_shows_a_divider_and_done_the_footer(qtbot) -> None:
    turn = AssistantTurn()
    qtbot.addWidget(turn)
    apply_event(turn, ThinkingStart(iteration=1))
    assert turn.thinking.active
    apply_event(turn, Compact(original_messages=40, kept_messages=9))
    apply_event(turn, Done(answer="short", iterations=3, usage=Usage.of(1200, 80),
                           elapsed=4.0, model="m1"))
    assert "Context summarised: 40 → 9 messages" in turn.dividers[0].text()
    footer = turn.footer.text().replace("\u00a0", " ").replace("\u2060", "")
    # No speeds measured (no streamed call): no made-up tok/s from the run's whole time.
    assert footer == "m1  ·  3 iterations  ·  1,200 in / 80 out tokens  ·  4.0 s"
    assert turn.answer_text() == "short" and not turn.thinking.active


def test_the_footer_shows_first_word_prompt_and_output_speed_separately(qtbot) -> None:
    turn = AssistantTurn()
    qtbot.addWidget(turn)
    metrics = RunMetrics(ttft=1.24, prompt_tps=412.3, output_tps=21.37)
    apply_event(turn, Done(answer="x", iterations=2, usage=Usage.of(900, 60), elapsed=6.0,
                           model="m1", metrics=metrics))
    footer = turn.footer.text().replace("\u00a0", " ").replace("\u2060", "")
    assert footer == ("m1  ·  2 iterations  ·  900 in / 60 out tokens  ·  first word 1.2 s  ·  "
                      "6.0 s  ·  prompt 412 tok/s  ·  output 21.4 tok/s")


class SlowLoadingLLM(ScriptedLLM):
    """A fake with the local adapter's ``load()``/``loaded`` shape, taking a while to load."""

    loaded = False

    async def load(self, progress=None) -> None:
        await asyncio.sleep(0.4)
        self.loaded = True


def test_model_loading_shows_progress_without_blocking(qtbot, loop) -> None:
    llm = SlowLoadingLLM([json_final("ok"), "Loaded and answered."], model_id="slow")

    async def scenario():
        window = await make_window(qtbot, llm)
        ticks: list[float] = []
        timer = QTimer()
        timer.setInterval(10)
        timer.timeout.connect(lambda: ticks.append(time.perf_counter()))
        timer.start()
        await window.send("hello")
        await wait_for(lambda: window.banner.isVisible())
        banner_text = window.banner.label.text()
        await window.controller.wait_idle()
        timer.stop()
        return window, banner_text, ticks

    window, banner_text, ticks = loop.run_until_complete(scenario())
    assert banner_text == "Loading slow…"
    assert not window.banner.isVisible()
    assert window.chat.items()[-1].answer_text() == "Loaded and answered."
    gaps = [b - a for a, b in itertools.pairwise(ticks)]
    assert len(ticks) > 20 and max(gaps) < 0.3  # the loop kept running during the load


@pytest.mark.real_model
def test_a_real_local_model_answers_in_the_window_without_stalling_it(qtbot, loop,
                                                                        bundled_model_path) -> None:
    from desktop_app.core.config.settings import Settings
    from desktop_app.core.llm.factory import build_registry

    async def scenario():
        window = await make_window(qtbot)
        window.ctx.registry = build_registry(Settings())  # the bundled model, first launch
        window.picker.set_registry(window.ctx.registry)
        window.controller.agent_options = {"max_iterations": 2, "max_tokens": 96,
                                           "synthesis_max_tokens": 48}
        ticks: list[float] = []
        timer = QTimer()
        timer.setInterval(10)
        timer.timeout.connect(lambda: ticks.append(time.perf_counter()))
        timer.start()
        await window.send("What is 12 times 12? Answer with the number.")
        await asyncio.wait_for(window.controller.wait_idle(), 300)
        timer.stop()
        await window.ctx.registry.aclose()
        return window, ticks

    window, ticks = loop.run_until_complete(scenario())
    turn = window.chat.items()[-1]
    assert turn.answer_text().strip(), turn.errors and turn.errors[0].message
    assert "qwen2.5-coder-0.5b" in turn.footer.text()
    gaps = sorted(b - a for a, b in itertools.pairwise(ticks))
    assert gaps[int(0.99 * (len(gaps) - 1))] < 0.25  # generous: a shared, loaded machine


def test_model_picker_lists_local_and_hosted_models_with_their_abilities(qtbot) -> None:
    from desktop_app.core.config.settings import EndpointModelConfig, Settings
    from desktop_app.core.llm.factory import build_registry
    from desktop_app.ui.model_picker import ModelPicker, abilities_text

    registry = build_registry(Settings(endpoints=[EndpointModelConfig(
        name="hosted", base_url="https://api.example.com/v1", model="gpt-x", vision=True)]))
    picker = ModelPicker()
    qtbot.addWidget(picker)
    picker.set_registry(registry)
    labels = [picker.combo.itemText(i) for i in range(picker.combo.count())]
    assert labels == ["qwen2.5-coder-0.5b  (built-in, offline)", "hosted  (hosted API)"]
    assert picker.abilities.full_text() == "native tool calls · streaming"
    changed: list[str] = []
    picker.model_changed.connect(changed.append)
    picker.combo.setCurrentIndex(1)
    assert changed == ["hosted"]
    assert picker.abilities.full_text() == "native tool calls · streaming · images"
    # Without native calls the strip says how the agent works instead (no ✗ row).
    entry = registry.entry("hosted")
    entry.abilities["tool_call"] = False
    assert abilities_text(entry) == "tools via JSON replies (strict JSON) · streaming · images"
    assert "context window: 32,768 tokens" in picker.combo.toolTip()
    picker.select("removed-model")  # a conversation's model deleted in Settings
    assert picker.current_model() == "qwen2.5-coder-0.5b"


def test_sending_without_any_model_says_what_to_do(qtbot, loop) -> None:
    async def scenario():
        window = await make_window(qtbot)  # an empty registry: nothing configured
        window.composer.set_text("hello?")
        window.composer.submit()
        await wait_for(lambda: window.chat.items())
        return window

    window = loop.run_until_complete(scenario())
    (turn,) = window.chat.items()
    assert "No model is configured" in turn.errors[0].message
    assert "Settings" in turn.errors[0].message
    assert not window.composer.running and window.conversation_id is None


def test_a_missing_local_model_file_is_reported_in_the_turn(qtbot, loop, tmp_path) -> None:
    from desktop_app.core.config.settings import BundledModelConfig, LocalModelConfig, Settings
    from desktop_app.core.llm.factory import build_registry

    settings = Settings(bundled=BundledModelConfig(enabled=False), local_models=[
        LocalModelConfig(name="mine", path=str(tmp_path / "gone.gguf"))])

    async def scenario():
        window = await make_window(qtbot, settings=settings)
        window.ctx.registry = build_registry(settings)
        window.picker.set_registry(window.ctx.registry)
        await window.send("hi")
        await window.controller.wait_idle()
        return window

    window = loop.run_until_complete(scenario())
    turn = window.chat.items()[-1]
    message = turn.errors[0].message
    assert "gone.gguf" in message and "Settings" in message
    assert turn.footer.isVisible() and not window.banner.isVisible()
    assert not window.composer.running


def test_first_launch_assembly_shows_progress_in_the_banner(qtbot, loop, monkeypatch,
                                                             tmp_path) -> None:
    """The assembly itself is core's (tested there); here: its progress reaches the window
    from the worker thread and the window stays usable meanwhile."""
    from desktop_app.core.config.settings import Settings
    from desktop_app.core.llm import bundled
    from desktop_app.core.llm.factory import build_registry
    from desktop_app.ui.app import prepare_default_model

    seen_threads: list[str] = []

    def fake_assembly(progress=None, **_kwargs):
        import threading

        seen_threads.append(threading.current_thread().name)
        for done in range(11):
            time.sleep(0.03)
            progress(done * 10, 100)
        return tmp_path / "model.gguf"

    monkeypatch.setattr(bundled, "is_bundled_model_ready", lambda *a, **k: False)
    monkeypatch.setattr(bundled, "ensure_bundled_model", fake_assembly)
    values: list[int] = []

    async def scenario():
        window = await make_window(qtbot)
        window.ctx.registry = build_registry(Settings())
        window.controller.model_progress.connect(lambda done, total: values.append(done))
        prepare_default_model(window)
        await wait_for(lambda: window.banner.isVisible())
        text = window.banner.label.text()
        await wait_for(lambda: not window.banner.isVisible(), timeout=10)
        return text

    text = loop.run_until_complete(scenario())
    assert text == "Preparing the built-in model (first launch only)…"
    assert values[-1] == 100 and len(values) == 11
    assert seen_threads and seen_threads[0] != "MainThread"


def test_artifacts_button_counts_and_new_chat_clears(qtbot, loop) -> None:
    async def scenario():
        window = await make_window(qtbot, ScriptedLLM(model_id="m"))
        window.artifact_pane.add_artifact("a.md", "text/markdown", "# a", show=False)
        window.artifact_pane.add_artifact("b.md", "text/markdown", "# b", show=False)
        counted = window.artifacts_button.text()
        window.new_conversation()
        return window, counted

    window, counted = loop.run_until_complete(scenario())
    assert counted == "Artifacts (2)"
    assert window.artifacts_button.text() == "Artifacts"
    assert window.artifact_pane.view is None  # never shown, so no web view was created


def test_footer_never_breaks_inside_a_figure() -> None:
    from desktop_app.ui.message_widgets import format_footer

    text = format_footer(model="m", iterations=1, usage=Usage.of(10, 20), elapsed=1.0,
                         ttft=0.5, prompt_tps=300.0, output_tps=20.0)
    parts = text.split("  ·  ")
    # No ordinary space or bare slash inside a part: Qt may only wrap between parts.
    assert all(" " not in part for part in parts)
    assert "\u2060/\u2060" in parts[-1] and parts[-1].endswith("s")


def test_the_user_s_own_message_is_shown_exactly_as_typed(qtbot) -> None:
    """Found driving the window: 'Compute 12*12 and 7*8' showed as 'Compute 1212 and 78'."""
    from desktop_app.ui.message_widgets import UserMessage

    text = "Compute 12*12 and 7*8, then _add_ them: # not a heading"
    message = UserMessage(text)
    qtbot.addWidget(message)
    assert message.view.toPlainText() == text


def test_status_marks_exist_in_the_default_font(qtbot) -> None:
    """Found driving the window: the running-step mark (⏳) rendered as an empty box."""
    from PySide6.QtGui import QFontMetrics
    from PySide6.QtWidgets import QApplication

    from desktop_app.ui.plan_card import _MARKS

    metrics = QFontMetrics(QApplication.font())
    for state, mark in _MARKS.items():
        assert all(metrics.inFontUcs4(ord(ch)) for ch in mark), state


def test_plan_repairs_are_a_tooltip_and_a_fallback_reason_is_shown(qtbot) -> None:
    """Found driving the window: developer-facing repair notes were shown as warnings."""
    from PySide6.QtWidgets import QLabel

    from desktop_app.core.dag.events import DagPlan, PlannedStep
    from desktop_app.ui.plan_card import PlanCard
    from desktop_app.ui.text_wrap import WrappingText

    step = PlannedStep(id="step_1", task="compute 12*12")
    repaired = PlanCard(DagPlan(round=0, steps=[step], warnings=[
        "Step 'step_1': model_hint 'calculator' is a tool; read as tool_hint."]))
    qtbot.addWidget(repaired)
    shown = [*repaired.findChildren(QLabel), *repaired.findChildren(WrappingText)]
    texts = [widget.text() for widget in shown]
    assert not any("model_hint" in text for text in texts)
    assert any("model_hint" in label.toolTip() for label in repaired.findChildren(QLabel))
    fallback = PlanCard(DagPlan(round=0, steps=[step], fallback=True,
                                warnings=["The model did not return a usable plan."]))
    qtbot.addWidget(fallback)
    assert any("did not return a usable plan" in view.text()
               for view in fallback.findChildren(WrappingText))


def test_opening_the_artifact_pane_never_widens_the_window(qtbot, loop) -> None:
    async def scenario():
        window = await make_window(qtbot, ScriptedLLM(model_id="m"))
        window.resize(900, 700)
        await asyncio.sleep(0.05)
        pane = window.artifact_pane
        pane.add_artifact("a.md", "text/markdown", "# a", show=False)
        waiting_text = pane.placeholder.text()
        window.artifacts_button.click()
        await asyncio.sleep(0.1)
        return window, waiting_text

    window, waiting_text = loop.run_until_complete(scenario())
    pane = window.artifact_pane
    assert "No artifacts yet" not in waiting_text  # never beside a listed artifact
    assert window.width() == 900 and pane.isVisible()
    assert pane.current() is not None  # the preview shows the artifact, not a blank page
    assert not window.sidebar.isVisible()  # it stepped aside in a window this narrow…
    window.artifacts_button.click()
    assert window.sidebar.isVisible() and window.width() == 900  # …and came back
