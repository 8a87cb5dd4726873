"""Tool selection, the context guard integration and confirmation of tools that change things."""

from __future__ import annotations

import json
from typing import Any

import pytest
from agent_helpers import FakeGuard, Recorder, echo_tool, many_tools, registry

from desktop_app.core.agent import Compact, Phase, ReActAgent
from desktop_app.core.agent.selection import (
    _TOOL_SELECTION_MAX,
    TOOL_SELECTION_THRESHOLD,
    select_tools,
)
from desktop_app.core.errors import ContextOverflowError, LLMConnectionError
from desktop_app.core.llm.testing import ScriptedLLM, json_action, json_final, tool_call_reply
from desktop_app.core.llm.types import ChatMessage, Usage
from desktop_app.core.tools.base import ToolRegistry

pytestmark = pytest.mark.anyio


def test_constants_match_the_spec() -> None:
    assert (TOOL_SELECTION_THRESHOLD, _TOOL_SELECTION_MAX) == (12, 6)


async def test_no_selection_at_or_below_the_threshold() -> None:
    llm = ScriptedLLM([json_final("ok")])
    events = Recorder()
    result = await ReActAgent(llm, ToolRegistry(many_tools(12))).run("q", on_event=events)
    assert len(llm.requests) == 1 and not events.of(Phase) and result.selected_tools is None


async def test_selection_above_threshold_filters_prompt_and_execution() -> None:
    tools = ToolRegistry(many_tools(20))
    llm = ScriptedLLM(['{"tools": ["tool_03", "TOOL_07 ", "nope"]}',
                       json_action("tool_03", {"text": "hi"}),
                       json_action("tool_09", {"text": "hi"}),
                       json_final("done")])
    events = Recorder()
    result = await ReActAgent(llm, tools).run("use tool 3", on_event=events)
    [phase] = events.of(Phase)
    assert phase.phase == "selecting_tools" and phase.total_tools == 20
    assert events.kinds()[0] == "phase"
    # The catalog is compact: name + one line, no schemas.
    catalog = llm.requests[0].messages[0].content
    assert "- tool_19: Echo text back (tool_19)" in catalog and '"text"' not in catalog
    assert result.selected_tools == ["tool_03", "tool_07"]
    loop_prompt = llm.requests[1].messages[0].content
    assert "tool_03" in loop_prompt and "tool_07" in loop_prompt and "tool_09" not in loop_prompt
    ok, rejected = result.steps
    assert ok.error is None
    assert rejected.error is not None and "Unknown tool 'tool_09'" in rejected.error


async def test_selection_keeps_at_most_six_tools() -> None:
    names = [f"tool_{i:02d}" for i in range(10)]
    llm = ScriptedLLM([json.dumps({"tools": names})])
    outcome = await select_tools(llm, ToolRegistry(many_tools(20)), "q")
    assert outcome.selected == names[:6] and len(outcome.registry) == 6


@pytest.mark.parametrize("replies", [
    ["no idea", "still no idea"],                     # unparseable (both plain-text tries)
    ['{"tools": ["ghost", "phantom"]}'],               # all names invalid
    ['{"tools": []}'],                                 # nothing chosen
    [LLMConnectionError("server gone")],               # exception
])
async def test_selection_failure_falls_back_to_the_full_set(replies: list[Any]) -> None:
    tools = ToolRegistry(many_tools(14))
    llm = ScriptedLLM([*replies, json_action("tool_13", {"text": "x"}), json_final("ok")])
    result = await ReActAgent(llm, tools).run("q")
    assert result.selected_tools is None and result.answer == "ok"
    assert result.steps[0].error is None  # every tool is still available
    loop_prompt = llm.requests[len(replies)].messages[0].content
    assert all(f"tool_{i:02d}" in loop_prompt for i in range(14))


async def test_selection_usage_counts_even_when_it_fails() -> None:
    from desktop_app.core.llm.types import LLMResult

    def reply(text: str, tokens: int) -> LLMResult:
        return LLMResult(message=ChatMessage.assistant(text), usage=Usage.of(tokens, 1))

    llm = ScriptedLLM([reply("junk", 10), reply("junk", 20), reply(json_final("ok"), 100)])
    result = await ReActAgent(llm, ToolRegistry(many_tools(13))).run("q")
    assert result.usage == Usage.of(130, 3) and result.selected_tools is None


async def test_selection_can_be_switched_off() -> None:
    llm = ScriptedLLM([json_final("ok")])
    await ReActAgent(llm, ToolRegistry(many_tools(20)), tool_selection=False).run("q")
    assert len(llm.requests) == 1


# --- context guard ---------------------------------------------------------------------------
async def test_guard_runs_before_every_iteration_and_compaction_is_reported() -> None:
    guard = FakeGuard(limit=4, keep=2, usage=Usage.of(7, 3))
    llm = ScriptedLLM([json_action("calculator", {"expression": "1"}),
                       json_action("calculator", {"expression": "2"}), json_final("2")])
    events = Recorder()
    result = await ReActAgent(llm, registry(), context_guard=guard).run("q", on_event=events)
    # The first check sees only the conversation (summarised as one); later ones the trace.
    assert [c[1:] for c in guard.calls] == [(4242, "general", False)] + [
        (4242, "react_iteration", False)] * 2
    assert [c[0] for c in guard.calls] == [2, 4, 6]  # message counts seen at each iteration
    compacts = events.of(Compact)
    assert [(c.original_messages, c.kept_messages) for c in compacts] == [(6, 4)]
    kinds = events.kinds()
    assert kinds.index("compact") == kinds.index("thinking:start:3") - 1
    # The compacted list (system + pinned query + last two) is what the model saw.
    third = llm.requests[2].messages
    assert len(third) == 4 and third[1].content == "q" and third[1].pinned
    assert result.usage.total_tokens >= 10  # compaction usage is counted


async def test_context_overflow_forces_one_compaction_and_retries() -> None:
    guard = FakeGuard()
    llm = ScriptedLLM([ContextOverflowError("too long"), json_final("fits now")])
    events = Recorder()
    result = await ReActAgent(llm, registry(), context_guard=guard).run("q", on_event=events)
    assert result.answer == "fits now"
    assert [c[3] for c in guard.calls] == [False, True]
    assert len(events.of(Compact)) == 1


async def test_second_overflow_gives_a_clear_error() -> None:
    llm = ScriptedLLM([ContextOverflowError("too long"), ContextOverflowError("still")])
    with pytest.raises(ContextOverflowError) as info:
        await ReActAgent(llm, registry(), context_guard=FakeGuard()).run("q")
    assert "even after compacting" in str(info.value) and "new conversation" in str(info.value)
    assert len(llm.requests) == 2


async def test_overflow_without_guard_says_what_to_do() -> None:
    with pytest.raises(ContextOverflowError) as info:
        await ReActAgent(ScriptedLLM([ContextOverflowError("x")]), registry()).run("q")
    assert "context window" in str(info.value) and "larger context" in str(info.value)


# --- confirmation ----------------------------------------------------------------------------
async def test_declined_tool_does_not_run_and_the_model_is_told() -> None:
    writer = echo_tool("write_note", read_only=False)
    asked: list[tuple[str, Any]] = []

    async def deny(name: str, args: dict[str, Any], change: object) -> bool:
        asked.append((name, args))
        return False

    llm = ScriptedLLM([tool_call_reply(("write_note", {"text": "hi"})),
                       ChatMessage.assistant("ok")], tool_call=True)
    result = await ReActAgent(llm, registry(writer), confirm=deny).run("note it")
    assert asked == [("write_note", {"text": "hi"})]
    assert result.steps[0].error == "The user declined to run write_note."
    assert "declined" in llm.requests[1].messages[-1].content


async def test_allowed_tool_runs_and_read_only_tools_are_not_asked() -> None:
    writer = echo_tool("write_note", read_only=False)
    asked: list[str] = []

    async def allow(name: str, args: dict[str, Any], change: object) -> bool:
        asked.append(name)
        return True

    llm = ScriptedLLM([json_action("write_note", {"text": "hi"}),
                       json_action("calculator", {"expression": "1"}), json_final("ok")])
    result = await ReActAgent(llm, registry(writer), confirm=allow).run("q")
    assert asked == ["write_note"]
    assert result.steps[0].observation == "write_note: hi" and result.steps[1].error is None


async def test_confirmer_failure_counts_as_not_confirmed() -> None:
    async def broken(name: str, args: dict[str, Any], change: object) -> bool:
        raise RuntimeError("UI went away")

    llm = ScriptedLLM([json_action("write_note", {"text": "hi"}), json_final("ok")])
    result = await ReActAgent(llm, registry(echo_tool("write_note", read_only=False)),
                              confirm=broken).run("q")
    assert "did not run" in (result.steps[0].error or "")


async def test_a_question_cut_to_fit_the_context_is_reported() -> None:
    """Found by an attack: a long prompt was cut to fit without telling the user."""
    from agent_helpers import Recorder

    from desktop_app.core.agent import Compact, ReActAgent, drive_run
    from desktop_app.core.context import ContextGuard
    from desktop_app.core.llm.testing import ScriptedLLM

    llm = ScriptedLLM(["Summary of what fit."], tool_call=True, context_size=2048)
    events = Recorder()
    question = "Please summarise this: " + "lorem ipsum dolor sit amet " * 3000
    await drive_run(ReActAgent(llm, [], context_guard=ContextGuard(llm)), question, emit=events)
    [compact] = [e for e in events.of(Compact) if e.question_tokens]
    assert compact.question_tokens > 10_000 > compact.question_kept_tokens > 100
    sent = llm.requests[0].messages[-1].content
    assert sent.startswith("Please summarise this:") and len(sent) < len(question)
