"""The real ContextGuard inside the real ReActAgent (scripted models): every loop request
fits the budget with the pinned query and valid tool pairing, compaction is reported and its
usage counted, and a provider overflow gets one forced compaction and one retry."""

from __future__ import annotations

import asyncio
from typing import Any

from context_helpers import tool_groups_ok

from desktop_app.core.agent import ReActAgent
from desktop_app.core.agent.events import Compact, Done, ErrorEvent, Event
from desktop_app.core.agent.runner import drive_run
from desktop_app.core.context import ContextGuard, TokenCounter, is_summary
from desktop_app.core.errors import ContextOverflowError
from desktop_app.core.llm.testing import ScriptedLLM, json_action, json_final, tool_call_reply
from desktop_app.core.llm.types import ChatMessage, LLMResult, Usage
from desktop_app.core.tools.base import FunctionTool, Tool, ToolResult

QUERY = "Find the warehouse with the most crates and tell me its exact count."
COUNTER = TokenCounter()


def big_tool(chars: int = 20_000) -> Tool:
    """A tool whose every answer is ``chars`` characters, with the key fact at the start."""
    async def run(page: int) -> ToolResult:
        head = f"page {page}: warehouse W{page} holds {1000 + page} crates. "
        return ToolResult(text=head + ("inventory line " * chars)[: chars - len(head)])

    return FunctionTool("inventory", "Read one page of the inventory",
                        {"type": "object", "properties": {"page": {"type": "integer"}},
                         "required": ["page"]}, run)


LOOP_USAGE = Usage.of(10, 1)


def fixed(message: ChatMessage | str, usage: Usage = LOOP_USAGE) -> LLMResult:
    """A scripted reply with known usage, so the run's total can be checked exactly."""
    if isinstance(message, str):
        message = ChatMessage.assistant(message)
    return LLMResult(message=message, usage=usage)


class Events:
    def __init__(self) -> None:
        self.events: list[Event] = []

    def __call__(self, event: Event) -> None:
        self.events.append(event)

    def of(self, cls: type[Event]) -> list[Any]:
        return [e for e in self.events if isinstance(e, cls)]


def test_every_loop_request_fits_and_keeps_the_query_in_native_mode() -> None:
    replies = [fixed(tool_call_reply(("inventory", {"page": page}))) for page in range(5)]
    llm = ScriptedLLM([*replies, fixed("W4 holds 1004 crates.")], tool_call=True,
                      context_size=2048)
    summariser = ScriptedLLM(default=fixed("W0..W3 hold 1000..1003 crates.", Usage.of(500, 20)))
    guard = ContextGuard(summariser)
    events = Events()
    agent = ReActAgent(llm, [big_tool()], context_guard=guard)
    result = asyncio.run(agent.run(QUERY, on_event=events))

    assert result.answer == "W4 holds 1004 crates."
    budget = guard.budget_for(llm, tools=llm.requests[0].tools)
    for request in llm.requests:
        assert COUNTER.count_messages(request.messages) <= budget
        assert request.messages[0].role == "system"
        assert [m.content for m in request.messages if m.pinned] == [QUERY]
        assert tool_groups_ok(request.messages)
        assert sum(is_summary(m) for m in request.messages) <= 1
    # The latest tool result is always there, cut but with its head.
    assert "page 4: warehouse W4 holds 1004 crates." in llm.requests[-1].messages[-1].content
    compacts = events.of(Compact)
    assert compacts and all(c.kept_messages <= c.original_messages for c in compacts)
    # Loop usage (6 × 10/1) plus every compaction call (500/20 each) counts toward the run.
    calls = len(summariser.requests)
    assert calls >= 1
    assert result.usage == Usage.of(60 + 500 * calls, 6 + 20 * calls)


def test_overflow_gets_one_forced_compaction_and_a_retry_in_json_mode() -> None:
    actions = [json_action("inventory", {"page": page}) for page in range(4)]
    llm = ScriptedLLM([*actions, ContextOverflowError("prompt too long"),
                       json_final("W3 holds 1003 crates.")], context_size=8192)
    summariser = ScriptedLLM(["W0..W2 hold 1000..1002 crates."])
    events = Events()
    agent = ReActAgent(llm, [big_tool(3000)], context_guard=ContextGuard(summariser))
    result = asyncio.run(agent.run(QUERY, on_event=events))

    assert result.answer == "W3 holds 1003 crates."
    failed, retried = llm.requests[-2], llm.requests[-1]
    assert COUNTER.count_messages(retried.messages) < COUNTER.count_messages(failed.messages)
    assert any(is_summary(m) and "1000..1002" in m.content for m in retried.messages)
    assert [m.content for m in retried.messages if m.pinned] == [QUERY]
    assert len(summariser.requests) == 1
    assert "working memory" in summariser.requests[0].system_text  # react_iteration hint
    assert len(events.of(Compact)) == 1


def test_a_second_overflow_is_a_clear_error_event_not_a_crash() -> None:
    llm = ScriptedLLM([json_action("inventory", {"page": 1}), json_action("inventory", {"page": 2}),
                       ContextOverflowError("prompt too long"),
                       ContextOverflowError("prompt still too long")], context_size=8192)
    agent = ReActAgent(llm, [big_tool(3000)], context_guard=ContextGuard(ScriptedLLM(["s"])))
    events = Events()
    outcome = asyncio.run(drive_run(agent, QUERY, emit=events))
    (error,) = events.of(ErrorEvent)
    assert "even after compacting" in error.message
    assert isinstance(events.events[-1], Done) and events.events[-1].error == error.message
    assert outcome.error == error.message


def test_a_long_loaded_history_is_compacted_before_the_first_call() -> None:
    history: list[ChatMessage] = []
    for turn in range(30):
        history += [ChatMessage.user(f"Question {turn}: how many crates are in W{turn}?"),
                    ChatMessage.assistant(f"W{turn} holds {1000 + turn} crates. " + "Details. " * 150)]
    llm = ScriptedLLM([json_final("W29 holds 1029 crates.")], context_size=4096)
    summariser = ScriptedLLM(["Earlier: W0..W28 hold 1000..1028 crates."])
    events = Events()
    agent = ReActAgent(llm, [big_tool()], context_guard=ContextGuard(summariser))
    result = asyncio.run(agent.run("And W29?", history=history, on_event=events))

    assert result.answer == "W29 holds 1029 crates."
    (request,) = llm.requests
    budget = ContextGuard.budget_for(llm)
    assert COUNTER.count_messages(request.messages) <= budget
    assert request.messages[-1].content == "And W29?" and request.messages[-1].pinned
    (compact,) = events.of(Compact)
    assert compact.original_messages == len(history) + 2  # + system prompt and the new query
    assert compact.kept_messages == len(request.messages)
