"""Artifacts from the report/table/chart tools through the real engine: the LLM sees only the
summary line, the events and steps carry name/mime/content, and the run's artifacts are stored
with the conversation (and the step that made them)."""

from __future__ import annotations

from pathlib import Path

import pytest

from desktop_app.core.agent import ReActAgent
from desktop_app.core.agent.events import Event, IterationDone
from desktop_app.core.agent.runner import drive_run
from desktop_app.core.llm.testing import ScriptedLLM, json_action, json_final, tool_call_reply
from desktop_app.core.store.async_store import AsyncStore
from desktop_app.core.tools.base import ToolRegistry
from desktop_app.core.tools.builtin.reports import report_tools

pytestmark = pytest.mark.anyio

REPORT_ARGS = {"title": "Weekly report", "sections": [
    {"heading": "Numbers", "text": "UNIQUE-BODY-MARKER sales went **up**."}]}


def _all_prompt_text(llm: ScriptedLLM) -> str:
    """Everything any request showed the model: prompts, observations, synthesis traces.

    The arguments the model wrote itself legitimately reappear (in its own messages and in the
    synthesis trace), so leaks are detected with markers that exist only in the generated
    document: rendered markup such as ``<strong>up</strong>``, ``<!DOCTYPE``, ``<svg``."""
    return "\n".join(m.content for r in llm.requests for m in r.messages)


def assert_no_source(text: str) -> None:
    for marker in ("<strong>up</strong>", "<!DOCTYPE", "Content-Security-Policy", "<svg",
                   "<polyline", "| --- |", "<table"):
        assert marker not in text, marker


async def test_native_mode_llm_sees_only_the_summary() -> None:
    llm = ScriptedLLM([tool_call_reply(("make_report", REPORT_ARGS)), "Report is ready."],
                      tool_call=True)
    events: list[Event] = []
    result = await ReActAgent(llm, ToolRegistry(report_tools())).run("make a report",
                                                                     on_event=events.append)
    [step] = result.steps
    [artifact] = step.artifacts
    assert (artifact.name, artifact.mime_type) == ("weekly-report.html", "text/html")
    assert "UNIQUE-BODY-MARKER" in artifact.content and "<strong>up</strong>" in artifact.content
    [tool_message] = [m for m in result.messages if m.role == "tool"]
    assert "The user sees weekly-report.html" in tool_message.content
    assert_no_source(_all_prompt_text(llm))
    [done] = [e for e in events if isinstance(e, IterationDone)]
    assert done.artifacts[0].content == artifact.content  # the UI gets the full document


async def test_json_mode_chart_and_markdown_table_are_summarised() -> None:
    chart = {"title": "Temps", "kind": "line", "labels": ["Mon", "Tue"],
             "series": [{"name": "UNIQUE-SERIES", "values": [3, 5]}]}
    table = {"title": "Team", "format": "markdown", "rows": [["UNIQUE-CELL", 1]]}
    llm = ScriptedLLM([json_action("make_chart", chart), json_action("make_table", table),
                       json_final("done")])
    result = await ReActAgent(llm, ToolRegistry(report_tools())).run("chart and table")
    names = [(a.name, a.mime_type) for s in result.steps for a in s.artifacts]
    assert names == [("temps.html", "text/html"), ("team.md", "text/markdown")]
    prompts = _all_prompt_text(llm)
    assert "The user sees temps.html" in prompts
    assert "The user sees team.md" in prompts
    assert_no_source(prompts)


async def test_artifacts_are_stored_with_the_conversation_and_step(tmp_path: Path) -> None:
    from desktop_app.core.store.run_recorder import RunRecorder  # the app's persistence path

    llm = ScriptedLLM([tool_call_reply(("make_report", REPORT_ARGS)), "Done.",
                       "Here is your report."], tool_call=True)
    agent = ReActAgent(llm, ToolRegistry(report_tools()))
    async with await AsyncStore.open(tmp_path / "chat.db") as store:
        conversation = await store.create_conversation("reports")
        recorder = RunRecorder(store, conversation.id)
        await recorder.begin("make a report")
        outcome = await drive_run(agent, "make a report", emit=recorder)
        message = recorder.answer
        assert message is not None
        [stored] = await store.list_artifacts(conversation.id)
        [step] = await store.list_tool_steps(message.id)
    assert outcome.error is None
    assert (stored.name, stored.mime_type) == ("weekly-report.html", "text/html")
    assert "UNIQUE-BODY-MARKER" in stored.content
    assert (stored.message_id, stored.step_id) == (message.id, step.id)
    assert step.tool == "make_report" and "The user sees" in (step.observation or "")
    # The call, the model's reply after it, the synthesis: which saw only the summary.
    assert len(llm.requests) == 3 and llm.requests[-1].kind == "stream"
    assert_no_source(_all_prompt_text(llm))
