"""ContextGuard behaviour: when it compacts, what the compaction model sees for each hint,
how earlier summaries are merged, the fallbacks, usage, the compact event and edge cases."""

from __future__ import annotations

import asyncio
import json

import pytest
from context_helpers import check_invariants, tool_exchange

from desktop_app.core.agent.events import Compact, encode_sse
from desktop_app.core.context import (
    CUT_MARKER,
    ContextGuard,
    TokenCounter,
    compact_event,
    compact_history,
    is_summary,
)
from desktop_app.core.errors import ContextOverflowError, LLMConnectionError
from desktop_app.core.llm.testing import ScriptedLLM
from desktop_app.core.llm.types import ChatMessage, LLMResult, Usage

COUNTER = TokenCounter()


def agent_run(steps: int, *, result_chars: int = 2000, start: int = 2) -> list[ChatMessage]:
    """System prompt, pinned query and ``steps`` tool exchanges with sizeable results."""
    messages = [ChatMessage.system("<0> You are a helpful assistant with tools."),
                ChatMessage.user("<1> What is the total weight of all crates in Berlin?",
                                 pinned=True)] if start == 2 else []
    tag = start
    for step in range(steps):
        result = f"crate {step}: weight {4700 + step} kg in Berlin. " + "detail " * (result_chars // 7)
        messages += tool_exchange(tag, [("inventory", json.dumps({"page": step}))], [result])
        tag += 2
    return messages


def run(coro):  # type: ignore[no-untyped-def]
    return asyncio.run(coro)


def test_nothing_changes_when_the_conversation_fits() -> None:
    llm = ScriptedLLM()
    messages = agent_run(2)
    result = run(ContextGuard(llm).check_and_compact(messages, 100_000))
    assert result.messages == messages
    assert not result.compacted and result.method == "none"
    assert result.original_count == result.kept_count == len(messages)
    assert llm.requests == [], "no compaction call when nothing needs compacting"


def test_a_huge_tool_result_is_cut_without_a_compaction_call() -> None:
    llm = ScriptedLLM()
    messages = agent_run(1, result_chars=20_000)
    result = run(ContextGuard(llm).check_and_compact(messages, 8000))
    assert result.compacted and result.method == "truncate" and result.truncated_messages == 1
    tool_message = result.messages[-1]
    assert CUT_MARKER in tool_message.content
    assert tool_message.content.startswith("<3> crate 0: weight 4700 kg")
    assert COUNTER.count_message(tool_message) <= 0.4 * 8000
    assert llm.requests == []


HINT_PHRASES = {
    "react_iteration": "working memory of a tool-using assistant",
    "general": "earlier part of a conversation",
    "step_dependency": "results of earlier steps of a plan",
}


@pytest.mark.parametrize("hint", sorted(HINT_PHRASES))
def test_the_hint_prompt_reaches_the_compaction_model(hint: str) -> None:
    llm = ScriptedLLM(["Crates 0-9 weigh 4700..4709 kg; next: add them up."])
    messages = agent_run(10)
    result = run(ContextGuard(llm).check_and_compact(messages, 1500, hint))
    assert result.method == "summary"
    (request,) = llm.requests
    assert request.messages[0].role == "system"
    assert HINT_PHRASES[hint] in request.system_text
    assert "Copy exact values verbatim" in request.system_text
    transcript = request.messages[1].content
    assert "crate 0: weight 4700 kg" in transcript, "the removed messages are summarised"
    assert "total weight of all crates" in transcript, "the goal is shown for orientation"
    assert request.max_tokens is not None and request.max_tokens > 0
    summaries = [m for m in result.messages if is_summary(m)]
    assert len(summaries) == 1
    assert "4700..4709 kg" in summaries[0].content
    check_invariants(messages, result, 1500, COUNTER)


def test_react_iteration_prompt_asks_for_goal_reasoning_and_exact_data() -> None:
    llm = ScriptedLLM(["summary"])
    run(ContextGuard(llm).check_and_compact(agent_run(10), 1500, "react_iteration"))
    system = llm.requests[0].system_text
    for phrase in ("the user's goal", "chain of reasoning", "exact number, name and value"):
        assert phrase in system


def test_a_later_round_merges_the_previous_summary_into_one() -> None:
    llm = ScriptedLLM(["FIRST: crates 0-9 weigh 4700..4709 kg.",
                       "SECOND: crates 0-19 weigh 4700..4719 kg."])
    guard = ContextGuard(llm)
    first = run(guard.check_and_compact(agent_run(10), 1500))
    grown = first.messages + agent_run(10, start=100)
    second = run(guard.check_and_compact(grown, 1500))
    assert "Previous summary (merge it in):\nFIRST: crates 0-9" in llm.requests[1].messages[1].content
    summaries = [m for m in second.messages if is_summary(m)]
    assert len(summaries) == 1
    assert "SECOND" in summaries[0].content and "FIRST" not in summaries[0].content
    # The title counts every original message condensed so far, across both rounds.
    first_count = len(agent_run(10)) - len(first.messages) + 1
    second_count = len(grown) - len(second.messages) + 1 - 1 + first_count
    assert f"— {first_count} messages condensed" in first.messages[2].content
    assert f"— {second_count} messages condensed" in summaries[0].content
    check_invariants(grown, second, 1500, COUNTER)


def test_failed_compaction_call_falls_back_to_heuristic_truncation() -> None:
    llm = ScriptedLLM([LLMConnectionError("server unreachable")])
    messages = agent_run(10)
    result = run(ContextGuard(llm).check_and_compact(messages, 1500))
    assert result.compacted and result.method == "fallback"
    assert result.reason is not None and "LLMConnectionError" in result.reason
    (summary,) = [m for m in result.messages if is_summary(m)]
    assert "shortened without a model" in summary.content
    assert "crate 0: weight 4700 kg" in summary.content
    check_invariants(messages, result, 1500, COUNTER)


def test_too_long_summary_falls_back_and_still_fits() -> None:
    llm = ScriptedLLM(["Crates weigh 4700 kg. " + "And so on. " * 5000])
    messages = agent_run(10)
    result = run(ContextGuard(llm).check_and_compact(messages, 1500))
    assert result.method == "fallback" and "too long" in (result.reason or "")
    check_invariants(messages, result, 1500, COUNTER)


def test_without_a_model_the_guard_truncates_heuristically() -> None:
    messages = agent_run(10)
    result = run(ContextGuard(None).check_and_compact(messages, 1500))
    assert result.method == "fallback" and result.usage == Usage()
    check_invariants(messages, result, 1500, COUNTER)


def test_usage_of_the_compaction_call_is_reported() -> None:
    reply = LLMResult(message=ChatMessage.assistant("short summary"), usage=Usage.of(321, 12))
    result = run(ContextGuard(ScriptedLLM([reply])).check_and_compact(agent_run(10), 1500))
    assert result.usage == Usage.of(321, 12)


def test_a_transcript_too_big_for_the_compaction_model_is_summarised_in_rounds() -> None:
    reply = LLMResult(message=ChatMessage.assistant("S: crates so far weigh 4700+ kg."),
                      usage=Usage.of(100, 10))
    llm = ScriptedLLM(default=reply, context_size=1024)
    messages = agent_run(30, result_chars=1200)
    result = run(ContextGuard(llm, max_rounds=10).check_and_compact(messages, 1500))
    calls = len(llm.requests)
    assert calls > 1
    for earlier, later in zip(llm.requests, llm.requests[1:], strict=False):
        assert "Previous summary (merge it in):\nS: crates" in later.messages[1].content
        assert COUNTER.count_messages(earlier.messages) + (earlier.max_tokens or 0) <= 1024
    assert result.usage == Usage.of(100 * calls, 10 * calls), "every round's usage counts"
    assert result.method == "summary"
    assert sum(is_summary(m) for m in result.messages) == 1
    check_invariants(messages, result, 1500, COUNTER)


def test_force_compacts_below_the_budget_even_when_it_fits() -> None:
    llm = ScriptedLLM(["forced summary"])
    messages = agent_run(4)
    budget = COUNTER.count_messages(messages) + 100
    result = run(ContextGuard(llm).check_and_compact(messages, budget, force=True))
    assert result.compacted and result.method == "summary"
    assert COUNTER.count_messages(result.messages) <= 0.7 * budget
    assert result.messages[-1] == messages[-1], "the latest tool exchange is kept"
    check_invariants(messages, result, budget, COUNTER)


def test_interrupts_and_the_query_stay_in_place() -> None:
    llm = ScriptedLLM(["summary"])
    interrupt = ChatMessage.user("<9> also count crates in Hamburg\n[USER INTERRUPT]", pinned=True)
    messages = agent_run(3) + [interrupt] + agent_run(6, start=10)
    result = run(ContextGuard(llm).check_and_compact(messages, 1500))
    pinned = [m for m in result.messages if m.pinned]
    assert [m.content for m in pinned] == [messages[1].content, interrupt.content]
    check_invariants(messages, result, 1500, COUNTER)


def test_pinned_messages_bigger_than_the_budget_are_cut_not_dropped() -> None:
    query = ChatMessage.user("<1> Summarise this document: " + "text " * 4000, pinned=True)
    messages = [ChatMessage.system("<0> You are helpful."), query]
    result = run(ContextGuard(ScriptedLLM()).check_and_compact(messages, 600))
    assert len(result.messages) == 2
    kept = result.messages[1]
    assert kept.pinned and kept.content.startswith("<1> Summarise this document")
    assert CUT_MARKER in kept.content
    assert COUNTER.count_messages(result.messages) <= 600


def test_a_budget_too_small_for_any_message_is_a_clear_error() -> None:
    messages = [ChatMessage.system("system"),
                *[ChatMessage.user(f"<{i}> interrupt", pinned=True) for i in range(1, 30)]]
    with pytest.raises(ContextOverflowError, match="cannot hold"):
        run(ContextGuard().check_and_compact(messages, 50))


def test_unknown_hint_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="unknown compaction hint 'summary'"):
        run(ContextGuard().check_and_compact(agent_run(1), 1000, "summary"))


def test_compact_history_uses_the_general_prompt() -> None:
    llm = ScriptedLLM(["We discussed crates in Berlin."])
    history = agent_run(10)
    result = run(compact_history(history, llm, 1500))
    assert HINT_PHRASES["general"] in llm.requests[0].system_text
    assert result.compacted and sum(is_summary(m) for m in result.messages) == 1


def test_compact_event_reports_original_and_kept_counts() -> None:
    llm = ScriptedLLM(["summary"])
    messages = agent_run(10)
    result = run(ContextGuard(llm).check_and_compact(messages, 1500))
    event = compact_event(result)
    assert isinstance(event, Compact)
    assert event.original_messages == len(messages) == 22
    assert event.kept_messages == len(result.messages) < 22
    assert encode_sse(event) == ("event: compact\ndata: {\"original_messages\":22,"
                                 f"\"kept_messages\":{len(result.messages)}}}\n\n")


def test_json_mode_actions_reach_the_summariser_as_sentences() -> None:
    llm = ScriptedLLM(["summary"])
    messages = [ChatMessage.system("<0> system"), ChatMessage.user("<1> query", pinned=True)]
    for i in range(2, 40, 2):
        action = json.dumps({"type": "tool_call", "tool": "inventory", "args": {"page": i},
                             "reasoning": "need more pages"})
        messages += [ChatMessage.assistant(action),
                     ChatMessage.user(f"Result of inventory:\n page {i} " + "crate " * 200)]
    run(ContextGuard(llm).check_and_compact(messages, 1500))
    transcript = llm.requests[0].messages[1].content
    assert 'called tool inventory with {"page": 2} (reasoning: need more pages)' in transcript
    assert '"type": "tool_call"' not in transcript
