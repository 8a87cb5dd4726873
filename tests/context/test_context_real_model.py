"""Context management with the real bundled model (Qwen2.5-Coder-0.5B via llama.cpp).

* Exact counts: the guard's count of a conversation covers what llama.cpp actually evaluates
  (so a budget computed with it is safe), without wasting much.
* End to end: a deliberately tiny window (2,048 tokens) and a tool returning 20,000
  characters — the run completes, the pinned query survives every compaction, and an answer
  is produced. The same model writes the compaction summary.

Measured while writing this: at temperature 0 the 0.5B model answers "which notes do I
have?"-style questions from memory instead of calling the tool (5 phrasings tried, JSON mode,
with and without constrained JSON). So the first two *loop* replies — the tool calls — are
scripted; everything after them is the real model: the compaction summary, the next loop
iteration and the streamed synthesis.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from pathlib import Path
from typing import Any

import pytest
from context_helpers import tool_groups_ok

from desktop_app.core.agent import ReActAgent
from desktop_app.core.agent.events import Compact, Event
from desktop_app.core.agent.runner import drive_run
from desktop_app.core.context import ContextGuard, TokenCounter, estimate_tokens, is_summary
from desktop_app.core.llm.base import LLM
from desktop_app.core.llm.testing import json_action
from desktop_app.core.llm.types import ChatMessage, LLMResult, ToolCall
from desktop_app.core.tools.base import FunctionTool, ToolResult

log = logging.getLogger(__name__)
pytestmark = pytest.mark.real_model

QUERY = "Which notes do I have? Look them up with notes_find."


def test_estimates_stay_close_to_the_real_tokenizer(bundled_llm: Any) -> None:
    samples = {
        "prose": "The quick brown fox jumps over the lazy dog while the cat sleeps. " * 40,
        "json": json.dumps([{"id": i, "name": f"file_{i}.txt", "size": 1024 * i,
                             "modified": "2026-12-02T10:00:00Z"} for i in range(60)]),
        "code": Path(__file__).read_text(encoding="utf-8")[:5000],
        "cjk": "東京都の人口は約千四百万人です。大阪は商業の中心地として知られています。" * 40,
        "numbers": " ".join(str(1000 + i * 37) for i in range(500)),
    }
    ratios = {name: estimate_tokens(text) / bundled_llm.count_tokens(text)
              for name, text in samples.items()}
    log.warning("estimate / exact token ratios: %s",
                {k: round(v, 2) for k, v in ratios.items()})
    # Undercounting is what overflows a window; a little overcounting only wastes room.
    assert all(0.8 <= ratio <= 1.4 for ratio in ratios.values()), ratios


def test_exact_count_covers_the_real_prompt(bundled_llm: Any) -> None:
    counter = TokenCounter(bundled_llm)
    messages = [
        ChatMessage.system("You are a helpful assistant."),
        ChatMessage.user("東京都の人口は? Also: what is 17 * 23?", pinned=True),
        ChatMessage.assistant("", tool_calls=[ToolCall(id="c1", name="calculator",
                                                       arguments='{"expression": "17*23"}')]),
        ChatMessage.tool("391", tool_call_id="c1", name="calculator"),
        ChatMessage.user("Thanks. And the population of Tokyo is about 14 million, right?"),
    ]
    counted = counter.count_messages(messages)
    assert counter.exact
    result = asyncio.run(bundled_llm.chat(messages, max_tokens=1, temperature=0.0))
    actual = result.usage.prompt_tokens
    log.warning("exact count %d vs real prompt %d tokens", counted, actual)
    assert actual <= counted <= actual * 1.3 + 20


class FirstRepliesScripted(LLM):
    """The real model, except that its first ``chat`` calls return fixed replies."""

    def __init__(self, real: LLM, first: list[str]) -> None:
        self.real = real
        self.first = list(first)
        self.requests: list[list[ChatMessage]] = []

    @property
    def model_id(self) -> str:
        return self.real.model_id

    @property
    def context_size(self) -> int:
        return self.real.context_size

    @property
    def abilities(self) -> dict[str, bool]:
        return self.real.abilities

    async def chat(self, messages: Any, **kwargs: Any) -> LLMResult:
        self.requests.append(list(messages))
        if self.first:
            return LLMResult(message=ChatMessage.assistant(self.first.pop(0)))
        return await self.real.chat(messages, **kwargs)

    def stream_chat(self, messages: Any, **kwargs: Any) -> Any:
        return self.real.stream_chat(messages, **kwargs)

    def count_tokens(self, text: str) -> int | None:
        return self.real.count_tokens(text)

    async def aclose(self) -> None:
        await self.real.aclose()


def test_tiny_window_with_a_huge_tool_result_completes(bundled_model_path: Path) -> None:
    from desktop_app.core.llm.llama_cpp_adapter import LlamaCppLLM

    calls: list[str] = []

    async def notes_find(query: str = "") -> ToolResult:
        calls.append(query)
        lines = ["- groceries: Groceries — milk, eggs, 4711 g flour"] + [
            f"- archive-{i}: Archived note {i} — old meeting minutes" for i in range(600)]
        return ToolResult(text="\n".join(lines)[:20_000])

    tool = FunctionTool("notes_find", "List the user's notes, or search them by words",
                        {"type": "object", "properties": {"query": {
                            "type": "string",
                            "description": "Words to look for; empty lists all notes."}}},
                        notes_find)
    # JSON mode: the scripted first replies are JSON actions.
    real = LlamaCppLLM(bundled_model_path, name="bundled-2k", context_size=2048,
                       native_tools=False)
    # Three big results: each is cut to 40 % of the budget, so together they overflow it and
    # the fourth iteration needs a real summary.
    llm = FirstRepliesScripted(real, [json_action("notes_find", {"query": q}, "look them up")
                                      for q in ("", "groceries", "archive")])
    guard = ContextGuard(llm)
    agent = ReActAgent(llm, [tool], context_guard=guard, max_iterations=4, max_tokens=200,
                       synthesis_max_tokens=120, temperature=0.0)
    events: list[Event] = []
    started = time.monotonic()
    try:
        outcome = asyncio.run(drive_run(agent, QUERY, emit=events.append))
    finally:
        asyncio.run(llm.aclose())
    compacts = [(e.original_messages, e.kept_messages) for e in events if isinstance(e, Compact)]
    assert outcome.result is not None
    messages = outcome.result.messages
    summaries = [m.content for m in messages if is_summary(m)]
    log.warning("2k-window run: %.1f s, tool calls %s, compactions %s, summary %r, answer %r, "
                "synthesis failed %s, usage %s", time.monotonic() - started, calls, compacts,
                summaries, outcome.answer, outcome.synthesis_failed, outcome.usage)

    assert outcome.error is None, outcome.error  # no context overflow, no crash
    assert outcome.answer.strip()
    assert len(calls) >= 3 and len(compacts) >= 3
    assert [m.content for m in messages if m.pinned][:1] == [QUERY]
    assert tool_groups_ok(messages)
    # The real model wrote the summary (the heuristic one says it was made without a model).
    assert len(summaries) == 1 and "shortened without a model" not in summaries[0]
    counter = TokenCounter(real)
    budget = guard.budget_for(llm)
    assert all(counter.count_messages(r) <= budget for r in llm.requests)
    # Compaction and the real loop call add real usage (the scripted replies add none).
    assert outcome.usage.prompt_tokens > 500
