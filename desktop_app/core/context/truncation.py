"""Cutting one text or message down to a token limit, keeping its head and tail.

The cut is marked in the text so the model (and a person reading the transcript) knows
something is missing, and the marker says how much. Head and tail are kept because tool output
often has its structure at the start and its conclusion (totals, errors) at the end.
"""

from __future__ import annotations

import json
from typing import Any

from desktop_app.core.context.tokens import TokenCounter
from desktop_app.core.llm.types import ChatMessage, ToolCall

#: Share of the kept characters that come from the head (the rest from the tail).
HEAD_SHARE = 0.7
#: Recognisable start of every cut marker, so tests and the UI can find cuts.
CUT_MARKER = "[… "


def cut_marker(removed_chars: int) -> str:
    """The text put where characters were removed."""
    return f"\n{CUT_MARKER}{removed_chars:,} characters cut to fit the context window …]\n"


def truncate_text(text: str, max_tokens: int, counter: TokenCounter) -> str:
    """``text`` cut to at most ``max_tokens`` tokens, keeping head and tail and marking the cut.

    Returns ``text`` unchanged if it already fits. For a limit too small to hold the marker,
    only the head is kept, ending in "…".
    """
    max_tokens = max(0, max_tokens)
    if counter.count_text(text) <= max_tokens:
        return text
    tokens = max(1, counter.count_text(text))
    chars_per_token = len(text) / tokens
    # First guess from the text's own density, then shrink until the exact/estimated count
    # agrees: token density varies inside one text (code vs prose vs CJK).
    keep = int(max_tokens * chars_per_token * 0.95)
    for _ in range(24):
        marker_tokens = counter.count_text(cut_marker(len(text)))
        keep = min(keep, int((max_tokens - marker_tokens) * chars_per_token))
        if keep < len(cut_marker(len(text))):
            break  # the marker would outweigh the text it keeps: keep the head only
        head = int(keep * HEAD_SHARE)
        tail = keep - head
        candidate = text[:head] + cut_marker(len(text) - keep) + (text[-tail:] if tail else "")
        if counter.count_text(candidate) <= max_tokens:
            return candidate
        keep = int(keep * 0.85)
    return _fit_head_only(text, max_tokens, counter)


def _fit_head_only(text: str, max_tokens: int, counter: TokenCounter) -> str:
    """For limits too small for head + marker + tail: the longest head of ``text`` that fits
    with an ellipsis, so at least its beginning (often a name or tag) survives."""
    low, high = 0, len(text)
    while low < high:  # binary search on the prefix length
        middle = (low + high + 1) // 2
        if counter.count_text(text[:middle] + "…") <= max_tokens:
            low = middle
        else:
            high = middle - 1
    if low == 0:
        return "…" if counter.count_text("…") <= max_tokens else ""
    return text[:low] + "…"


def _truncate_json_strings(value: Any, max_chars: int) -> Any:
    """``value`` with every long string cut (head and tail kept), structure intact."""
    if isinstance(value, str) and len(value) > max_chars:
        head = int(max_chars * HEAD_SHARE)
        tail = max_chars - head
        return value[:head] + cut_marker(len(value) - max_chars) + (value[-tail:] if tail else "")
    if isinstance(value, list):
        return [_truncate_json_strings(item, max_chars) for item in value]
    if isinstance(value, dict):
        return {key: _truncate_json_strings(item, max_chars) for key, item in value.items()}
    return value


def truncate_arguments(arguments: str, max_tokens: int, counter: TokenCounter) -> str:
    """Tool-call arguments cut to ``max_tokens``, still valid JSON when they were JSON.

    Some chat templates parse the arguments of earlier calls, so cutting inside the JSON
    syntax could break the next request; long string values are shortened instead.
    """
    if counter.count_text(arguments) <= max_tokens:
        return arguments
    try:
        parsed = json.loads(arguments)
    except ValueError:
        return truncate_text(arguments, max_tokens, counter)
    limit = max(16, len(arguments))
    for _ in range(24):
        limit = max(8, int(limit * 0.6))
        candidate = json.dumps(_truncate_json_strings(parsed, limit), ensure_ascii=False)
        if counter.count_text(candidate) <= max_tokens:
            return candidate
        if limit <= 8:
            break
    # Structure alone is too big (thousands of keys): keep valid JSON with a note.
    return json.dumps({"_truncated": cut_marker(len(arguments)).strip()})


def truncate_message(message: ChatMessage, max_tokens: int, counter: TokenCounter) -> ChatMessage:
    """A copy of ``message`` whose content and tool-call arguments fit ``max_tokens`` together.

    Returns the same object when it already fits. Role, ids, names and pinning are kept, so
    tool-call pairing survives the cut.
    """
    total = counter.count_message(message)
    if total <= max_tokens:
        return message
    fixed = total - counter.count_text(message.content) - sum(
        counter.count_text(call.arguments) for call in message.tool_calls)
    room = max(0, max_tokens - fixed)
    parts = [counter.count_text(message.content)] + [
        counter.count_text(call.arguments) for call in message.tool_calls]
    shares = _share_room(parts, room)
    content = truncate_text(message.content, shares[0], counter)
    calls = [
        ToolCall(id=call.id, name=call.name,
                 arguments=truncate_arguments(call.arguments, share, counter))
        for call, share in zip(message.tool_calls, shares[1:], strict=True)
    ]
    return message.model_copy(update={"content": content, "tool_calls": calls})


def _share_room(sizes: list[int], room: int) -> list[int]:
    """Split ``room`` tokens over parts of ``sizes``: small parts keep all, big ones share."""
    shares = [0] * len(sizes)
    remaining = room
    order = sorted(range(len(sizes)), key=lambda i: sizes[i])
    for position, index in enumerate(order):
        fair = remaining // (len(sizes) - position)
        shares[index] = min(sizes[index], fair)
        remaining -= shares[index]
    return shares
