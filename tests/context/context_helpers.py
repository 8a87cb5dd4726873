"""Conversation builders and the invariant checker shared by the context tests.

Every generated message starts with a unique tag ``<n>`` so a kept (possibly cut) message
can be traced back to its original, independently of the implementation's own grouping.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from desktop_app.core.context import CUT_MARKER, TokenCounter, is_summary
from desktop_app.core.context.guard import CompactionResult
from desktop_app.core.llm.types import ChatMessage, ToolCall

ASCII_WORDS = ["alpha", "beta", "gamma", "delta", "4711", "kg", "Berlin", "3.14159", "result", "value"]
CJK_TEXT = "東京都の人口は約千四百万人です。大阪は商業の中心地として知られています。"
_TAG = re.compile(r"^<(\d+)>")


def make_text(tag: int, length: int, script: str) -> str:
    """A tagged text of about ``length`` characters in ``script`` (ascii, cjk or mixed)."""
    if script == "cjk":
        body = (CJK_TEXT * (length // len(CJK_TEXT) + 1))[:length]
    elif script == "mixed":
        half = length // 2
        body = (CJK_TEXT * (half // len(CJK_TEXT) + 1))[:half] + " " + " ".join(
            ASCII_WORDS[i % len(ASCII_WORDS)] for i in range(max(1, (length - half) // 6)))
    else:
        body = " ".join(f"{ASCII_WORDS[i % len(ASCII_WORDS)]}{i}" for i in range(max(1, length // 7)))
    return f"<{tag}> {body}"


def tag_of(message: ChatMessage) -> int | None:
    match = _TAG.match(message.content)
    return int(match.group(1)) if match else None


def tool_groups_ok(messages: Sequence[ChatMessage]) -> bool:
    """Every tool message directly follows (with its siblings) the assistant message that
    called it, and every call of such an assistant message has its tool message."""
    index = 0
    while index < len(messages):
        message = messages[index]
        if message.role == "tool":
            return False  # a tool message not consumed by a preceding tool_calls block
        index += 1
        if message.role == "assistant" and message.tool_calls:
            wanted = {c.id for c in message.tool_calls}
            seen: set[str] = set()
            while index < len(messages) and messages[index].role == "tool":
                call_id = messages[index].tool_call_id or ""
                if call_id not in wanted or call_id in seen:
                    return False
                seen.add(call_id)
                index += 1
            if seen != wanted:
                return False
    return True


def check_invariants(original: list[ChatMessage], result: CompactionResult, budget: int,
                     counter: TokenCounter) -> None:
    """Assert every SPEC §6 invariant of ``result`` against its input ``original``."""
    out = result.messages
    assert result.original_count == len(original)
    assert result.kept_count == len(out)
    # Fits the budget.
    assert counter.count_messages(out) <= budget, (counter.count_messages(out), budget)
    # Leading system prompt kept, first.
    head = [m for m in original[:1] if m.role == "system"]
    if head:
        assert out[0].role == "system"
        assert out[0].content == head[0].content or _is_cut(out[0].content)
    # Tool-call pairing.
    assert tool_groups_ok(out)
    # At most one summary; exactly one when anything was removed.
    summaries = [m for m in out if is_summary(m)]
    assert len(summaries) <= 1
    by_tag = {tag_of(m): m for m in original if not is_summary(m)}
    # A pinned message cut so short that its tag was cut too ("<100…" under a tiny budget)
    # is checked as the head of one of the pinned originals it may come from.
    heads = [m for m in out if not is_summary(m) and tag_of(m) is None and m.pinned
             and m.content.endswith("…")]
    maybe: set[int | None] = set()
    for cut_head in heads:
        sources = {tag_of(m) for m in original if m.pinned and m.role == cut_head.role
                   and m.content.startswith(cut_head.content[:-1])}
        assert sources, f"a cut pinned message that is no original's head: {cut_head}"
        maybe |= sources
    kept_tags = [tag_of(m) for m in out if not is_summary(m) and m not in heads]
    removed = [m for t, m in by_tag.items() if t not in kept_tags and t not in maybe]
    had_summary = any(is_summary(m) for m in original)
    if removed or had_summary:
        assert len(summaries) == 1, "removed messages must be replaced by exactly one summary"
    # Every kept message is an original (maybe cut), in chronological order.
    assert None not in kept_tags, [m for m in out if tag_of(m) is None and not is_summary(m)]
    assert kept_tags == sorted(kept_tags), "chronological order broken"
    assert len(set(kept_tags)) == len(kept_tags)
    for message in out:
        if is_summary(message) or message in heads:
            continue
        source = by_tag[tag_of(message)]
        assert message.role == source.role and message.pinned == source.pinned
        assert message.tool_call_id == source.tool_call_id
        assert [c.id for c in message.tool_calls] == [c.id for c in source.tool_calls]
        if message.content != source.content:
            assert _is_cut(message.content)
    # Every pinned message kept; its content verbatim unless pinned + system alone were
    # too big for the budget, in which case it may be cut (never dropped).
    pinned = [m for m in original if m.pinned]
    out_pinned = [m for m in out if m.pinned]
    assert len(out_pinned) == len(pinned)
    for kept, source in zip(out_pinned, pinned, strict=True):
        if kept in heads:  # its tag was cut: it must be the head of this very original
            assert source.content.startswith(kept.content[:-1]) and tag_of(source) in maybe
        else:
            assert tag_of(kept) == tag_of(source)
    roomy = counter.count_messages(head + pinned) <= budget // 2
    for before, after in zip(pinned, out_pinned, strict=True):
        if roomy:
            assert after.content == before.content
    # The summary sits where the first removed message was.
    if summaries and removed:
        first_removed = min(tag_of(m) or 0 for m in removed)
        position = out.index(summaries[0])
        assert all((tag_of(m) or 0) < first_removed for m in out[:position] if m.role != "system")


def _is_cut(content: str) -> bool:
    """A cut is marked: a cut marker in the middle, or an ellipsis after a kept head."""
    return CUT_MARKER in content or content.endswith("…")


def tool_exchange(tag: int, calls: list[tuple[str, str]], results: list[str],
                  content: str = "") -> list[ChatMessage]:
    """An assistant tool_calls message (tag ``tag``) plus its tool messages (tags after it)."""
    tool_calls = [ToolCall(id=f"call_{tag}_{i}", name=name, arguments=args)
                  for i, (name, args) in enumerate(calls)]
    out = [ChatMessage.assistant(content or f"<{tag}>", tool_calls=tool_calls)]
    for i, (call, result) in enumerate(zip(tool_calls, results, strict=True)):
        out.append(ChatMessage.tool(f"<{tag + 1 + i}> {result}", tool_call_id=call.id,
                                    name=call.name))
    return out
