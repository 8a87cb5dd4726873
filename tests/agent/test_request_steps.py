"""Chained requests ("do X, then Y") are handed to the model one step at a time."""

from __future__ import annotations

import pytest
from agent_helpers import Recorder

from desktop_app.core.agent import IterationDone, ReActAgent, drive_run
from desktop_app.core.agent.request_steps import split_steps, step_tool
from desktop_app.core.llm.testing import ScriptedLLM, tool_call_reply
from desktop_app.core.tools.base import ToolRegistry
from desktop_app.core.tools.builtin.calculator import CalculatorTool
from desktop_app.core.tools.builtin.notes import NoteStore, note_tools
from desktop_app.core.tools.builtin.reports import report_tools
from desktop_app.core.tools.builtin.units import UnitConvertTool

pytestmark = pytest.mark.anyio


def _tools(tmp_path) -> ToolRegistry:
    return ToolRegistry([CalculatorTool(), UnitConvertTool(), *report_tools(),
                         *note_tools(NoteStore(tmp_path / "notes"))])


@pytest.mark.parametrize(("request_text", "steps"), [
    ("Convert 10 miles to kilometres, then multiply the result by 3.",
     ["Convert 10 miles to kilometres", "Multiply the result by 3."]),
    ("Calculate 15% of 240 and save the result in a note titled 'Tip'.",
     ["Calculate 15% of 240", "Save the result in a note titled 'Tip'."]),
    ("Compute 12*12 and 7*8, then add the two results.",
     ["Compute 12*12 and 7*8", "Add the two results."]),
    # The second step borrows the first one's verb.
    ("Rent is 1200 and food 450. Compute the monthly total, then the yearly total.",
     ["Rent is 1200 and food 450. Compute the monthly total", "Compute the yearly total."]),
    ("Convert 5 km and 10 km to miles and show the results in a table.",
     ["Convert 5 km and 10 km to miles", "Show the results in a table."]),
    ("Convert 10 miles to km. Multiply the result by 3.",
     ["Convert 10 miles to km.", "Multiply the result by 3."]),
    # What the note should hold is looked up first.
    ("Save a note titled 'Tokyo time' with the current time in Tokyo.",
     ["Find the current time in Tokyo", "Save a note titled 'Tokyo time' with it."]),
    # Not chained: "and" inside one action, a question, a list of things.
    ("Find the time in London and in Sydney.", None),
    ("Explain a Python generator and give an example.", None),
    ("What is 3+4 and why?", None),
    ("Save a note titled 'Groceries' with milk and eggs.", None),
    ("A dinner costs 156.80. Split the total among 4 people.", None),  # facts, one command
    ("Buy salt and pepper, then", None),
    ("Summarise this:\nfirst do X, then do Y", None),  # a pasted text is read whole
])
def test_only_clear_chaining_is_split(request_text: str, steps: list[str] | None) -> None:
    assert split_steps(request_text) == (steps or [request_text.strip()])


@pytest.mark.parametrize(("step", "tool"), [
    ("Save the result in a note titled 'Tip'.", "note_create"),
    ("Show the results in a table.", "make_table"),
    ("Add the two results.", "calculator"),
    ("Rent is 1200. Compute the monthly total", "calculator"),
    ("Convert that area to square feet.", "convert_units"),
    ("Total the amounts in expenses.csv", None),  # a file: the model picks the file tool
    ("Find the current time in London", None),
])
def test_a_step_names_its_tool(tmp_path, step: str, tool: str | None) -> None:
    assert step_tool(step, _tools(tmp_path)) == tool


async def test_each_step_is_its_own_turn_with_its_tool(tmp_path) -> None:
    llm = ScriptedLLM([
        tool_call_reply(("convert_units", {"value": 10, "from_unit": "mi", "to_unit": "km"})),
        "Done with that step.",   # the model ends step 1 in prose: step 2 comes next
        tool_call_reply(("calculator", {"expression": "16.09344 * 3"})),
        "48.28 km",               # the synthesis
    ], tool_call=True)
    events = Recorder()
    agent = ReActAgent(llm, _tools(tmp_path), split_chained_requests=True)
    outcome = await drive_run(agent, "Convert 10 miles to km, then multiply the result by 3.",
                              emit=events)
    first, second, third, synthesis = llm.requests
    assert first.tool_choice == {"type": "function", "function": {"name": "convert_units"}}
    assert first.messages[-1].content.endswith("Step 1 of 2: Convert 10 miles to km")
    assert second.tool_choice is None  # step 1 may need more calls: the model decides
    assert third.tool_choice == {"type": "function", "function": {"name": "calculator"}}
    assert third.messages[-1].content.startswith("Step 2 of 2: Multiply the result by 3.")
    # The last step is one action: its success ends the loop, and its result is the draft.
    assert synthesis.tools is None
    assert "16.09344 * 3 = 48.28032" in synthesis.messages[-1].content
    assert [card.tool_name for card in events.of(IterationDone)] == ["convert_units",
                                                                      "calculator"]
    assert outcome.answer == "48.28 km"


async def test_a_step_with_no_named_tool_must_call_some_tool(tmp_path) -> None:
    llm = ScriptedLLM([
        tool_call_reply(("calculator", {"expression": "12*12"})),
        tool_call_reply(("calculator", {"expression": "7*8"})),
        "144 and 56",
        tool_call_reply(("note_create", {"title": "Sum", "text": "200"})),
        "Saved.",
    ], tool_call=True)
    agent = ReActAgent(llm, _tools(tmp_path), split_chained_requests=True)
    await drive_run(agent, "Find 12*12 and 7*8, and then save both in a note titled 'Sum'.",
                    emit=Recorder())
    assert llm.requests[0].tool_choice == "required"
    assert llm.requests[3].tool_choice == {"type": "function",
                                           "function": {"name": "note_create"}}
    assert len(llm.requests) == 5  # the note ends the run: synthesis follows


async def test_without_the_option_a_chained_request_is_one_question(tmp_path) -> None:
    llm = ScriptedLLM(["30"], tool_call=True)
    await drive_run(ReActAgent(llm, _tools(tmp_path)),
                    "Convert 10 miles to km, then multiply the result by 3.", emit=Recorder())
    assert llm.requests[0].tool_choice is None
    assert "Step 1" not in llm.requests[0].messages[-1].content
