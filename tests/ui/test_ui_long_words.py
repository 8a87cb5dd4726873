"""Long words (a URL, a path, a number the model wrote) wrap inside the chat instead of
widening it past the window's right edge, where the chat, without a horizontal scroll
bar, would cut them off."""

from __future__ import annotations

import json

import pytest
from PySide6.QtWidgets import QWidget
from test_ui_dag_and_confirm import brain_with
from ui_helpers import make_window

from desktop_app.core.llm.testing import FunctionLLM, json_final
from desktop_app.ui.message_widgets import AssistantTurn, Divider, ErrorCard
from desktop_app.ui.text_wrap import WrappingText

pytestmark = pytest.mark.gui

LONG = "12*12+7*8=" + "1234567890" * 20


def _past_the_edge(turn: AssistantTurn, view: QWidget) -> list[str]:
    """The visible widgets of ``turn`` whose right edge is past the chat's viewport."""
    over = []
    for widget in [turn, *turn.findChildren(QWidget)]:
        if widget.isVisible():
            right = widget.mapTo(view, widget.rect().topRight()).x()
            if right > view.width():
                over.append(f"{type(widget).__name__} {widget.objectName()} at {right}")
    return over


def test_a_dag_turn_with_long_words_stays_inside_the_chat(qtbot, loop) -> None:
    plan = json.dumps({"steps": [
        {"id": "step_1", "task": f"compute {LONG}"},
        {"id": "step_2", "task": "add the results", "dependencies": ["step_1"]}]})
    brain = brain_with(plan, f"The result: {LONG}", lambda request: json_final(f"out {LONG}"))

    async def scenario():
        window = await make_window(qtbot, FunctionLLM(brain, model_id="planner-model"))
        window.resize(900, 700)
        window.picker.mode.setCurrentIndex(window.picker.mode.findData("dag"))
        await window.send(f"go {LONG}")
        await window.controller.wait_idle()
        return window

    window = loop.run_until_complete(scenario())
    turn = window.chat.items()[-1]
    turn.add_error(f"The file {LONG}.txt could not be read.")
    turn.add_divider(f"Check: {LONG}")
    [card] = turn.plans
    for step in ("step_1", "step_2"):
        card.toggle_output(step)  # the steps' outputs, opened
    qtbot.wait(100)
    view = window.chat.viewport()
    assert view.width() < 900
    assert _past_the_edge(turn, view) == []
    # The words are shown as written (what a person copies is what was said).
    shown = [view.text() for view in turn.findChildren(WrappingText) if view.isVisible()]
    assert f"compute {LONG}" in shown
    assert shown.count(f"out {LONG}") == 2
    assert [e.findChild(WrappingText).text() for e in turn.findChildren(ErrorCard)] == [
        f"⚠  The file {LONG}.txt could not be read."]
    assert any(LONG in d.text() for d in turn.findChildren(Divider))
