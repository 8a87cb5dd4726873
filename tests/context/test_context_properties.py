"""Property tests: the ContextGuard invariants hold over many generated conversations.

Conversations mix plain turns, native tool exchanges (several calls per message), JSON-mode
observations, pinned queries and ``[USER INTERRUPT]``s, ASCII and CJK text, and huge tool
results; the compaction model succeeds, fails, answers too long or answers nothing.
"""

from __future__ import annotations

import asyncio
import json

from context_helpers import check_invariants, make_text, tag_of, tool_exchange
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from desktop_app.core.context import ContextGuard, TokenCounter, is_summary
from desktop_app.core.context.guard import FORCE_SHRINK
from desktop_app.core.context.tokens import MESSAGE_OVERHEAD
from desktop_app.core.errors import ContextOverflowError, LLMConnectionError
from desktop_app.core.llm.testing import FunctionLLM, Request
from desktop_app.core.llm.types import ChatMessage

SCRIPTS = st.sampled_from(["ascii", "cjk", "mixed"])
SIZES = st.one_of(st.integers(0, 300), st.integers(300, 3000), st.just(20_000))
MODES = st.sampled_from(["ok", "raise", "too_long", "empty", "no_llm"])
PROPERTY_SETTINGS = settings(max_examples=100, deadline=None, derandomize=True,
                             suppress_health_check=[HealthCheck.too_slow,
                                                    HealthCheck.data_too_large])


@st.composite
def conversation(draw: st.DrawFn, start_tag: int = 0, opening: bool = True) -> list[ChatMessage]:
    """A well-formed conversation (optionally with system prompt and pinned query first)."""
    tag = start_tag
    messages: list[ChatMessage] = []
    if opening:
        if draw(st.booleans()):
            messages.append(ChatMessage.system(make_text(tag, draw(st.integers(10, 600)), "ascii")))
            tag += 1
        messages.append(ChatMessage.user(make_text(tag, draw(st.integers(5, 300)), draw(SCRIPTS)),
                                         pinned=True))
        tag += 1
    for _ in range(draw(st.integers(0, 14))):
        kind = draw(st.sampled_from(["assistant", "tools", "tools", "observation",
                                     "interrupt", "user"]))
        if kind == "tools":
            n = draw(st.integers(1, 3))
            calls = []
            for i in range(n):
                arg_text = make_text(0, draw(st.sampled_from([10, 200, 3000])), draw(SCRIPTS))
                calls.append((f"tool{i}", json.dumps({"path": f"f{i}.txt", "text": arg_text},
                                                     ensure_ascii=False)))
            results = [make_text(0, draw(SIZES), draw(SCRIPTS))[4:] for _ in range(n)]
            with_text = draw(st.booleans())
            content = make_text(tag, 80, "ascii") if with_text else ""
            messages += tool_exchange(tag, calls, results, content=content)
            tag += 1 + n
        elif kind == "interrupt":
            text = make_text(tag, draw(st.integers(5, 200)), draw(SCRIPTS))
            messages.append(ChatMessage.user(f"{text}\n[USER INTERRUPT]", pinned=True))
            tag += 1
        elif kind == "observation":
            messages.append(ChatMessage.user(make_text(tag, draw(SIZES), draw(SCRIPTS))))
            tag += 1
        else:
            role = "assistant" if kind == "assistant" else "user"
            messages.append(ChatMessage(role=role, content=make_text(tag, draw(SIZES),
                                                                     draw(SCRIPTS))))
            tag += 1
    return messages


def summariser(mode: str, context_size: int) -> FunctionLLM | None:
    """A compaction model that succeeds, fails, overflows or returns nothing."""
    def reply(request: Request) -> str:
        if mode == "raise":
            raise LLMConnectionError("server went away")
        if mode == "too_long":
            return "very long summary " * 2000
        if mode == "empty":
            return "   "
        return f"Summary of {request.messages[-1].content.count('[')} entries: 4711 kg, Berlin."
    return None if mode == "no_llm" else FunctionLLM(reply, context_size=context_size)


@PROPERTY_SETTINGS
@given(messages=conversation(), budget=st.integers(300, 6000), mode=MODES,
       window=st.sampled_from([1024, 2048, 8192]), force=st.booleans(),
       hint=st.sampled_from(["react_iteration", "general", "step_dependency"]))
def test_invariants_hold_for_generated_conversations(
        messages: list[ChatMessage], budget: int, mode: str, window: int, force: bool,
        hint: str) -> None:
    snapshot = [m.model_copy(deep=True) for m in messages]
    llm = summariser(mode, window)
    guard = ContextGuard(llm)
    result = asyncio.run(guard.check_and_compact(messages, budget, hint, force=force))
    check_invariants(messages, result, budget, TokenCounter())
    assert messages == snapshot, "the caller's list must not be modified"
    if result.method in ("summary", "fallback"):
        assert result.compacted
    if mode in ("raise", "too_long", "empty", "no_llm"):
        assert result.method != "summary"


@PROPERTY_SETTINGS
@given(first=conversation(), later=st.lists(conversation(start_tag=0, opening=False),
                                            min_size=1, max_size=4),
       budget=st.integers(400, 3000), mode=MODES)
def test_exactly_one_summary_however_many_rounds(
        first: list[ChatMessage], later: list[list[ChatMessage]], budget: int, mode: str) -> None:
    guard = ContextGuard(summariser(mode, 4096))
    counter = TokenCounter()
    current = asyncio.run(guard.check_and_compact(first, budget)).messages
    for round_number, extra in enumerate(later, start=1):
        # Re-tag the new messages so tags stay unique and increasing across rounds.
        offset = 1000 * round_number
        extra = [_retag(m, offset) for m in extra]
        conversation_now = current + extra
        try:
            result = asyncio.run(guard.check_and_compact(conversation_now, budget, force=True))
        except ContextOverflowError:
            # Allowed only when the messages that must stay cannot fit even with a couple of
            # tokens of content each (dozens of interrupts in a tiny window).
            must_keep = [m for m in conversation_now if m.pinned or m.role == "system"]
            assert (len(must_keep) + 1) * (MESSAGE_OVERHEAD + 5) + 3 > budget * FORCE_SHRINK
            return
        check_invariants(conversation_now, result, budget, counter)
        current = result.messages
        assert sum(is_summary(m) for m in current) <= 1


def _retag(message: ChatMessage, offset: int) -> ChatMessage:
    """``message`` with its tag and tool-call ids moved by ``offset``."""
    tag = tag_of(message)
    if tag is not None:
        message = message.model_copy(update={
            "content": f"<{tag + offset}>" + message.content[len(f"<{tag}>"):]})
    if message.tool_calls:
        calls = [c.model_copy(update={"id": f"{c.id}_{offset}"}) for c in message.tool_calls]
        return message.model_copy(update={"tool_calls": calls})
    if message.tool_call_id:
        return message.model_copy(update={"tool_call_id": f"{message.tool_call_id}_{offset}"})
    return message


def test_a_pinned_message_cut_past_its_tag_still_counts_as_kept() -> None:
    """The example a full CI run found: under a 400-token budget CJK interrupts are cut
    to a few tokens ("<100…"), shorter than their own tag."""
    words = ["alpha", "beta", "gamma", "delta", "4711", "kg", "Berlin", "3.14159", "result",
             "value"]
    long_reply = "<1> " + " ".join(f"{words[i % 10]}{i}" for i in range(2857))
    text = "東京都の人口は約千四百万人です。"

    def interrupt(tag: int, tail: str) -> ChatMessage:
        return ChatMessage(role="user", content=f"<{tag}> {text}{tail}\n[USER INTERRUPT]",
                           pinned=True)

    first = [ChatMessage(role="user", content="<0> alpha0", pinned=True)]
    later = [[interrupt(0, "大阪は商"), ChatMessage(role="assistant", content=long_reply)],
             [interrupt(0, ""), interrupt(1, "大"), interrupt(2, "大"), interrupt(3, "大阪は商")],
             [interrupt(0, "大阪は"), interrupt(1, "大阪は商"), interrupt(2, "大阪は商"),
              interrupt(3, "大阪は商")]]
    test_exactly_one_summary_however_many_rounds.hypothesis.inner_test(  # type: ignore[attr-defined]
        first=first, later=later, budget=400, mode="ok")
