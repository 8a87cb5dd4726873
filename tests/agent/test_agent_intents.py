"""Requests that open with a tool's command get that tool's call on the first turn."""

from __future__ import annotations

import pytest
from agent_helpers import Recorder

from desktop_app.core.agent import IterationDone, ReActAgent, drive_run
from desktop_app.core.agent.intents import commanded_tool
from desktop_app.core.llm.testing import ScriptedLLM, tool_call_reply
from desktop_app.core.tools.base import ToolRegistry
from desktop_app.core.tools.builtin.notes import NoteStore, note_tools
from desktop_app.core.tools.builtin.reports import report_tools

pytestmark = pytest.mark.anyio


def _tools(tmp_path) -> ToolRegistry:
    return ToolRegistry([*report_tools(), *note_tools(NoteStore(tmp_path / "notes"))])


@pytest.mark.parametrize(("query", "tool"), [
    ("Make a table of the first four planets.", "make_table"),
    ("please create a table with columns Name and Phone", "make_table"),
    ("Draw a bar chart of sales: Jan 120, Feb 95.", "make_chart"),
    ("Make a line chart of these temperatures", "make_chart"),
    ("Write a short report titled 'Weekly Summary'", "make_report"),
    ("Save a note titled 'Groceries' with: milk", "note_create"),
    ("Convert 5 km to miles and show the results in a table.", None),  # convert first
    ("What is a table in SQL?", None),
    ("Can you explain how notes work?", None),
    ("Create a file called x.txt", None),  # write_file is not offered here
])
def test_only_an_opening_command_names_a_tool(tmp_path, query: str, tool: str | None) -> None:
    assert commanded_tool(query, _tools(tmp_path)) == tool


async def test_the_first_turn_is_a_forced_call_of_the_commanded_tool(tmp_path) -> None:
    table = tool_call_reply(("make_table", {"title": "Planets", "columns": ["Order", "Planet"],
                                            "rows": [[1, "Mercury"], [2, "Venus"]]}))
    llm = ScriptedLLM([table, "Here is the table."], tool_call=True)  # 2nd: the synthesis
    events = Recorder()
    await drive_run(ReActAgent(llm, _tools(tmp_path)), "Make a table of the first planets.",
                    emit=events)
    assert llm.requests[0].tool_choice == {"type": "function",
                                           "function": {"name": "make_table"}}
    assert all(r.tool_choice is None for r in llm.requests[1:])  # only the first turn
    # Done once the table is made: no second loop turn, the synthesis answers.
    assert len(llm.requests) == 2 and llm.requests[1].tools is None
    [card] = events.of(IterationDone)
    assert card.tool_name == "make_table" and card.artifacts


@pytest.mark.parametrize(("query", "text_task"), [
    ("Fix the grammar: 'She don't like apples.'", True),
    ("Translate 'good morning' into Spanish.", True),
    ("Please write a haiku about autumn", True),
    ("Summarise this: the meeting moved to Tuesday.", True),
    ("Translate notes.txt into German", False),  # a file to read first
    ("Rewrite my note about the trip", False),
    ("What is 12% of 80?", False),
    ("Write a report titled 'Q3'", False),
])
def test_text_tasks_are_recognised(query: str, text_task: bool) -> None:
    from desktop_app.core.agent.intents import is_text_task

    assert is_text_task(query) is text_task


async def test_a_text_task_is_answered_in_text(tmp_path) -> None:
    llm = ScriptedLLM(["She doesn't like apples."], tool_call=True)
    outcome = await drive_run(ReActAgent(llm, _tools(tmp_path)),
                              "Fix the grammar: 'She don't like apples.'", emit=Recorder())
    # Asked like plain chat: no tools and no system turn of ours (the template's applies).
    assert llm.requests[0].tools is None
    assert [m.role for m in llm.requests[0].messages] == ["user"]
    assert outcome.answer == "She doesn't like apples."


async def test_a_text_task_keeps_the_assistants_own_system_prompt(tmp_path) -> None:
    llm = ScriptedLLM(["Buenos días."], tool_call=True)
    agent = ReActAgent(llm, _tools(tmp_path), system_prompt="You translate into Spanish.")
    await drive_run(agent, "Translate 'good morning' into Spanish.", emit=Recorder())
    assert llm.requests[0].messages[0].content == "You translate into Spanish."


async def test_a_failed_commanded_call_is_forced_again_then_the_run_ends(tmp_path) -> None:
    def bad(values: list[int]) -> object:  # different each time: not a repeat
        return tool_call_reply(("make_chart", {"title": "T", "kind": "bar",
                                               "labels": ["a", "b"], "values": values}))

    llm = ScriptedLLM([bad([1]), bad([1, 2, 3]), bad([]), "I could not draw it.", "Sorry."],
                      tool_call=True)
    await drive_run(ReActAgent(llm, _tools(tmp_path)), "Draw a bar chart of a 1, b 2.",
                    emit=Recorder())
    forced = {"type": "function", "function": {"name": "make_chart"}}
    # Three forced tries, then the synthesis (no tools) says it failed: no wandering.
    assert [r.tool_choice for r in llm.requests] == [forced, forced, forced, None]
    assert llm.requests[-1].tools is None


async def test_a_done_command_is_answered_with_the_tools_confirmation(tmp_path) -> None:
    table = tool_call_reply(("make_table", {"title": "Planets", "columns": ["Order", "Planet"],
                                            "rows": [[1, "Mercury"], [2, "Venus"]]}))
    # A second reply would be the synthesis: it must not be asked for.
    llm = ScriptedLLM([table, "| Order | Planet |"], tool_call=True)
    events = Recorder()
    outcome = await drive_run(ReActAgent(llm, _tools(tmp_path), confirm_commands=True),
                              "Make a table of the first planets.", emit=events)
    assert len(llm.requests) == 1
    assert outcome.answer == "Here is the table “Planets” (2 rows × 2 columns)."
    kinds = [type(e).__name__ for e in events.events]
    # The protocol's order holds: the tool card, then the answer's start, text and end.
    assert kinds.index("IterationDone") < kinds.index("AnswerStart") < kinds.index(
        "AnswerDelta") < kinds.index("AnswerDone") < kinds.index("Done")


async def test_a_saved_note_is_confirmed_with_what_it_says(tmp_path) -> None:
    note = tool_call_reply(("note_create", {"title": "Groceries", "text": "milk, eggs"}))
    llm = ScriptedLLM([note], tool_call=True)
    outcome = await drive_run(ReActAgent(llm, _tools(tmp_path), confirm_commands=True),
                              "Save a note titled 'Groceries' with: milk, eggs", emit=Recorder())
    assert outcome.answer == "Saved the note “Groceries”:\n\n> milk, eggs"


async def test_a_command_that_keeps_failing_is_answered_with_the_tools_error(tmp_path) -> None:
    def bad(value: str) -> object:  # different each time: not a repeat
        return tool_call_reply(("make_chart", {"title": "T", "labels": ["a", "b"],
                                               "series": [{"values": value}]}))

    llm = ScriptedLLM([bad("x"), bad("y"), bad("z"), "I could not draw the chart."],
                      tool_call=True)
    outcome = await drive_run(ReActAgent(llm, _tools(tmp_path), confirm_commands=True),
                              "Draw a bar chart of a 1, b 2.", emit=Recorder())
    assert len(llm.requests) == 3  # three tries, no synthesis: nothing is confirmed
    assert outcome.answer.startswith("I could not carry that out (tried 3 times): ")
    assert outcome.result is not None
    last = outcome.result.steps[-1]
    assert last.error and last.error.rstrip(".") in outcome.answer
    assert not outcome.result.artifacts
