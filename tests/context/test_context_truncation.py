"""Cutting single oversized texts and messages: head and tail kept, the cut marked, the
result within the limit, tool-call arguments still valid JSON."""

from __future__ import annotations

import json

from desktop_app.core.context import CUT_MARKER, TokenCounter, truncate_message, truncate_text
from desktop_app.core.llm.types import ChatMessage, ToolCall

COUNTER = TokenCounter()


def test_text_that_fits_is_returned_unchanged() -> None:
    assert truncate_text("short text", 100, COUNTER) == "short text"


def test_long_text_keeps_head_and_tail_and_marks_the_cut() -> None:
    text = "HEAD " + "filler " * 5000 + " TAIL-TOTAL=4711"
    out = truncate_text(text, 200, COUNTER)
    assert COUNTER.count_text(out) <= 200
    assert out.startswith("HEAD ")
    assert out.endswith("TAIL-TOTAL=4711")
    assert CUT_MARKER in out and "characters cut" in out


def test_cjk_text_is_cut_to_the_limit() -> None:
    text = "東京都の人口は約千四百万人です。" * 2000
    out = truncate_text(text, 300, COUNTER)
    assert 200 <= COUNTER.count_text(out) <= 300
    assert out.startswith("東京都")


def test_tiny_limits_keep_the_beginning() -> None:
    out = truncate_text("<42> " + "word " * 1000, 4, COUNTER)
    assert COUNTER.count_text(out) <= 4
    assert out.startswith("<42>") and out.endswith("…")


def test_message_cut_keeps_role_ids_and_pinning() -> None:
    message = ChatMessage.tool("x" * 80_000, tool_call_id="call_7", name="read_file")
    cut = truncate_message(message, 500, COUNTER)
    assert COUNTER.count_message(cut) <= 500
    assert (cut.role, cut.tool_call_id, cut.name) == ("tool", "call_7", "read_file")
    assert message.content == "x" * 80_000, "the original is not modified"


def test_huge_tool_call_arguments_stay_valid_json() -> None:
    arguments = json.dumps({"path": "notes.txt", "content": "line of text\n" * 5000})
    message = ChatMessage.assistant("", tool_calls=[ToolCall(id="c1", name="write_file",
                                                             arguments=arguments)])
    cut = truncate_message(message, 300, COUNTER)
    assert COUNTER.count_message(cut) <= 300
    parsed = json.loads(cut.tool_calls[0].arguments)
    assert parsed["path"] == "notes.txt"
    assert CUT_MARKER in parsed["content"]


def test_malformed_arguments_are_cut_as_text() -> None:
    arguments = '{"broken": "' + "y" * 10_000
    message = ChatMessage.assistant("", tool_calls=[ToolCall(id="c1", name="t", arguments=arguments)])
    cut = truncate_message(message, 200, COUNTER)
    assert COUNTER.count_message(cut) <= 200
    assert cut.tool_calls[0].arguments.startswith('{"broken": "yyy')
