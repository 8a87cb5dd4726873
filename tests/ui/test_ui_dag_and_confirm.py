"""DAG mode shows its plan with step status and model; confirmation dialogs for tools."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable

import pytest
from ui_helpers import make_window, wait_for

from desktop_app.core.llm.testing import FunctionLLM, Request, ScriptedLLM, json_action, json_final
from desktop_app.core.tools.base import FunctionTool, ToolRegistry
from desktop_app.ui.confirm_dialog import ConfirmDialog
from desktop_app.ui.plan_card import PlanCard

pytestmark = pytest.mark.gui

PLAN = json.dumps({"steps": [
    {"id": "step_1", "task": "find a"},
    {"id": "step_2", "task": "find b"},
    {"id": "step_3", "task": "combine a and b", "dependencies": ["step_1", "step_2"]}]})
ACHIEVED = json.dumps({"achieved": True, "confidence": 0.9, "reason": "ok",
                       "final_answer": "a and b"})


def brain_with(plan: str, answer: str,
               step: Callable[[Request], str]) -> Callable[[Request], str]:
    """A scripted DAG model: ``plan`` to the planner, ACHIEVED to the analyzer, ``answer``
    as the synthesis, and ``step`` for everything a step's agent asks."""

    def brain(request: Request) -> str:
        system = request.system_text
        if request.kind == "stream":
            return answer
        if "You are a planner" in system:
            return plan
        if "analy" in system.lower() and "achieved" in system:
            return ACHIEVED
        return step(request)

    return brain


dag_brain = brain_with(PLAN, "Both parts are done: **a and b**.",
                       lambda request: json_final(f"result for: {request.last_user_text[:40]}"))


def test_dag_run_shows_the_plan_with_step_status_and_model(qtbot, loop) -> None:
    llm = FunctionLLM(dag_brain, model_id="planner-model")

    async def scenario():
        window = await make_window(qtbot, llm)
        window.picker.mode.setCurrentIndex(window.picker.mode.findData("dag"))
        await window.send("get a and b, then combine them")
        await window.controller.wait_idle()
        conv = await window.ctx.store.get_conversation(window.conversation_id)
        return window, conv

    window, conv = loop.run_until_complete(scenario())
    assert conv.mode == "dag"
    turn = window.chat.items()[-1]
    cards = [w for w in turn.plans if isinstance(w, PlanCard)]
    assert len(cards) == 1
    assert cards[0].status == {"step_1": "done", "step_2": "done", "step_3": "done"}
    assert all("planner-model" in label.text() for label in cards[0]._model_labels.values())
    # A step's output can be opened (and closed) from its row.
    output = cards[0]._outputs["step_1"]
    assert output.isHidden() and "result for:" in output.text()
    cards[0]._toggles["step_1"].click()
    assert output.isVisible() and cards[0]._toggles["step_1"].text() == "▾ step_1"
    cards[0]._toggles["step_1"].click()
    assert output.isHidden()
    assert turn.answer_text() == "Both parts are done: **a and b**."
    assert "planner-model" in turn.footer.text()
    checks = [d.text() for d in turn.dividers if "Check:" in d.text()]
    assert checks

    # Reopened (after a restart, say): the same plan card, step statuses and check line.
    async def reopen():
        conv_id = window.conversation_id
        window.new_conversation()
        await window.open_conversation(conv_id)

    loop.run_until_complete(reopen())
    again = window.chat.items()[-1]
    [card] = [w for w in again.plans if isinstance(w, PlanCard)]
    assert card.status == {"step_1": "done", "step_2": "done", "step_3": "done"}
    assert "result for:" in card._outputs["step_1"].text()
    assert [d.text() for d in again.dividers if "Check:" in d.text()] == checks
    assert again.answer_text() == turn.answer_text()


def _note_tool(calls: list[str]) -> FunctionTool:
    async def write_note(text: str) -> str:
        calls.append(text)
        return f"saved note: {text}"

    return FunctionTool("write_note", "Save a note", {
        "type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
        write_note, read_only=False)


@pytest.mark.parametrize("choice", ["allow", "deny"])
def test_tools_that_change_things_ask_first(qtbot, loop, choice) -> None:
    calls: list[str] = []
    llm = ScriptedLLM([json_action("write_note", {"text": "buy milk"}), json_final("done"),
                       "Handled."], model_id="scripted")

    async def scenario():
        window = await make_window(qtbot, llm,
                                   tools_factory=lambda _s: ToolRegistry([_note_tool(calls)]))
        await window.send("remember to buy milk")
        await wait_for(lambda: window.findChildren(ConfirmDialog))
        dialog = window.findChildren(ConfirmDialog)[0]
        shown = dialog.isVisible()
        (dialog.allow_button if choice == "allow" else dialog.deny_button).click()
        await window.controller.wait_idle()
        return window, shown

    window, shown = loop.run_until_complete(scenario())
    assert shown
    card = window.chat.items()[-1].cards[0]
    if choice == "allow":
        assert calls == ["buy milk"] and card.status == "done"
    else:
        assert calls == [] and card.status == "error" and card.expanded


def test_stop_while_a_confirmation_is_open_denies_it(qtbot, loop) -> None:
    calls: list[str] = []
    llm = ScriptedLLM([json_action("write_note", {"text": "x"})], default=json_final("ok"),
                      model_id="scripted")

    async def scenario():
        window = await make_window(qtbot, llm,
                                   tools_factory=lambda _s: ToolRegistry([_note_tool(calls)]))
        await window.send("note x")
        await wait_for(lambda: window.findChildren(ConfirmDialog))
        window.controller.stop()
        await asyncio.wait_for(window.controller.wait_idle(), 5)
        return window

    window = loop.run_until_complete(scenario())
    assert calls == []
    assert "stopped" in window.chat.items()[-1].footer.text()
    assert not any(d.isVisible() for d in window.findChildren(ConfirmDialog))


ONE_STEP = json.dumps({"steps": [{"id": "step_1", "task": "save the note 'buy milk'"}]})


def note_brain(request: Request) -> str:
    system = request.system_text
    if request.kind == "stream":
        return "Saved."
    if "You are a planner" in system:
        return ONE_STEP
    if "analy" in system.lower() and "achieved" in system:
        return ACHIEVED
    if any("Result of write_note" in m.content for m in request.messages):
        return json_final("saved")
    return json_action("write_note", {"text": "buy milk"})


def test_dag_steps_ask_before_tools_that_change_things(qtbot, loop) -> None:
    calls: list[str] = []
    llm = FunctionLLM(note_brain, model_id="planner-model")

    async def scenario():
        window = await make_window(qtbot, llm,
                                   tools_factory=lambda _s: ToolRegistry([_note_tool(calls)]))
        window.picker.mode.setCurrentIndex(window.picker.mode.findData("dag"))
        await window.send("remember to buy milk")
        await wait_for(lambda: window.findChildren(ConfirmDialog))
        window.findChildren(ConfirmDialog)[0].allow_button.click()
        await window.controller.wait_idle()

    loop.run_until_complete(scenario())
    assert calls == ["buy milk"]


def test_a_follow_up_sent_during_a_dag_run_reaches_it(qtbot, loop) -> None:
    seen: list[str] = []

    def brain(request: Request) -> str:
        if request.kind == "stream":
            seen.append(request.messages[-1].content)
        return dag_brain(request)

    llm = FunctionLLM(brain, model_id="planner-model", delay=0.05)

    async def scenario():
        window = await make_window(qtbot, llm)
        window.picker.mode.setCurrentIndex(window.picker.mode.findData("dag"))
        await window.send("get a and b, then combine them")
        await asyncio.sleep(0.1)
        await window.controller.interrupt("also mention c")
        await window.controller.wait_idle()

    loop.run_until_complete(scenario())
    assert seen and "also mention c" in seen[0]


def test_dag_step_tool_calls_show_cards_send_artifacts_and_are_saved(qtbot, loop) -> None:
    from desktop_app.core.tools.builtin.reports import report_tools
    from desktop_app.ui.history_view import build_turn

    plan = json.dumps({"steps": [{"id": "step_1", "task": "make the weekly table"}]})
    table = {"title": "Weekly", "rows": [["UNIQUE-CELL", 1]]}
    served: list[str] = []

    def step(_request: Request) -> str:
        if not served:
            served.append("table")
            return json_action("make_table", table)
        return json_final("made the table")

    llm = FunctionLLM(brain_with(plan, "The table is in the artifact pane.", step),
                      model_id="planner-model")

    async def scenario():
        window = await make_window(qtbot, llm,
                                   tools_factory=lambda _s: ToolRegistry(report_tools()))
        window.picker.mode.setCurrentIndex(window.picker.mode.findData("dag"))
        await window.send("make the weekly table")
        await window.controller.wait_idle()
        detail = await window.ctx.store.load_conversation(window.conversation_id)
        return window, detail

    window, detail = loop.run_until_complete(scenario())
    turn = window.chat.items()[-1]
    assert [card.tool_name for card in turn.cards] == ["step_1 · make_table"]
    assert turn.cards[0].status == "done"
    assert [a.name for a in window.artifact_pane.artifacts] == ["weekly.html"]
    # Saved: reopening the conversation shows the step's tool call and its artifact.
    answer = detail.messages[-1]
    assert [step.tool for step in answer.steps] == ["make_table"]
    assert [a.name for a in detail.artifacts] == ["weekly.html"]
    reopened = build_turn(answer, [])
    qtbot.addWidget(reopened)
    assert [card.tool_name for card in reopened.cards] == ["make_table"]
