"""A call whose arguments loop is cut after the first copy, not written to the token limit."""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator
from typing import Any

import pytest

from desktop_app.core.llm.llama_cpp_adapter import LlamaCppLLM
from desktop_app.core.llm.loops import cut_looping_call
from desktop_app.core.llm.types import ChatMessage, StreamChunk

NOTE = {"type": "function", "function": {
    "name": "note_create", "description": "Save a note",
    "parameters": {"type": "object", "properties": {
        "title": {"type": "string"}, "text": {"type": "string"},
        "tags": {"type": "array", "items": {"type": "string"}}}}}}
CALCULATOR = {"type": "function", "function": {
    "name": "calculator", "description": "Exact arithmetic",
    "parameters": {"type": "object", "properties": {"expression": {"type": "string"}}}}}
#: How the bundled model wrote "make a note called Landlord: Derek Mills, …" (fresh
#: phrasings, third set): the tags ran on until the token limit, 154 s.
LOOPING = ('<tool_call>\n{"name": "note_create", "arguments": {"title": "Landlord: Derek '
           'Mills", "text": "Rent goes out on the 3rd", "tags": ["Landlord", "Rent", '
           + '"Landlord", ' * 300)


def test_a_loop_over_values_keeps_one_copy_and_no_fragment() -> None:
    for end in range(len(LOOPING) - 12, len(LOOPING)):  # wherever the tokens stop
        cut = cut_looping_call(LOOPING[:end])
        assert cut is not None
        assert cut.count('"Landlord"') <= 3 and not cut.rstrip().endswith('"La')


def test_a_loop_inside_one_value_keeps_that_value() -> None:
    text = '{"name": "note_create", "arguments": {"text": "Pay rent. ' + "and then " * 40
    cut = cut_looping_call(text)
    assert cut is not None and cut.endswith("Pay rent. and then ")


#: How the bundled model, made to call the calculator for how to say "thank you" in German,
#: wrote its argument (fresh phrasings, fourth set): a number without end, 106 s.
RUNAWAY = ('<tool_call>\n{"name": "calculator", "arguments": {"expression": "1'
           + "0" * 400)


#: Asked for 12 L in US gallons (held-out split): a factor without end, 434 s in two calls.
PERIODIC = ('<tool_call>\n{"name": "calculator", "arguments": {"expression": "12 * 3.7'
            + "85439" * 80)


@pytest.mark.parametrize("text", [RUNAWAY, RUNAWAY.replace("0" * 400, " " * 400), PERIODIC])
def test_a_call_ending_in_a_digit_or_blank_without_end_is_dropped_whole(text: str) -> None:
    for end in range(len(text) - 200, len(text)):
        assert cut_looping_call(text[:end]) == ""


def test_calls_before_a_runaway_one_are_kept() -> None:
    first = '<tool_call>\n{"name": "calculator", "arguments": {"expression": "2+2"}}\n</tool_call>\n'
    assert cut_looping_call(first + RUNAWAY) == first


@pytest.mark.parametrize("text", [
    '{"name": "calculator", "arguments": {"expression": "2**100 = ' + "1267650600228229401496703205376" + '"}}',
    '{"name": "calculator", "arguments": {"expression": "10**30 = 1' + "0" * 30,
    '{"name": "calculator", "arguments": {"expression": "1/3 = 0.' + "3" * 40,
    '{"name": "calculator", "arguments": {"expression": "' + str(2**200) + " + " + str(3**120),
    '{"name": "calculator", "arguments": {"expression": "1/7 = 0.' + "142857" * 7,
    ('{"name": "make_table", "arguments": {"rows": [["Mercury", "1"], ["Venus", "2"], '
     '["Earth", "3"], ["Mars", "4"]]}}'),
    '{"name": "make_chart", "arguments": {"values": [' + "0, " * 80 + "0]}}",
    '{"name": "note_create", "arguments": {"text": "' + "ha " * 10 + '"}}',
])
def test_calls_without_a_loop_are_left_alone(text: str) -> None:
    assert cut_looping_call(text) is None


class ScriptedLlama(LlamaCppLLM):
    """The adapter over a scripted token stream instead of llama.cpp."""

    def __init__(self, pieces: list[str]) -> None:
        super().__init__("/nonexistent/model.gguf", name="scripted")
        self._tool_style = "hermes"
        self.pieces = pieces
        self.read = 0

    async def _raw_stream(self, request: dict[str, Any]) -> AsyncGenerator[StreamChunk, None]:
        for piece in self.pieces:
            self.read += 1
            yield StreamChunk(content=piece)
        yield StreamChunk(finish_reason="length")


@pytest.mark.anyio
async def test_the_local_adapter_stops_a_looping_call_and_makes_it_with_one_copy() -> None:
    pieces = [LOOPING[i:i + 4] for i in range(0, len(LOOPING), 4)]
    llm = ScriptedLlama(pieces)
    try:
        result = await llm.chat([ChatMessage.user("make a note …")], tools=[NOTE])
    finally:
        await llm.aclose()
    assert llm.read < len(pieces) // 4  # stopped early, not at the end of the stream
    (call,) = result.message.tool_calls
    arguments = json.loads(call.arguments)
    assert call.name == "note_create" and arguments["title"] == "Landlord: Derek Mills"
    assert arguments["tags"][:2] == ["Landlord", "Rent"] and len(arguments["tags"]) <= 3


@pytest.mark.anyio
async def test_the_local_adapter_stops_a_runaway_number_and_makes_no_call() -> None:
    pieces = [RUNAWAY[i:i + 4] for i in range(0, len(RUNAWAY), 4)]
    llm = ScriptedLlama(pieces)
    try:
        result = await llm.chat([ChatMessage.user("how do I say thank you in German?")],
                                tools=[CALCULATOR], tool_choice={
                                    "type": "function", "function": {"name": "calculator"}})
    finally:
        await llm.aclose()
    assert llm.read < len(pieces)  # stopped at the run, not at the end of the stream
    assert result.message.tool_calls == [] and not result.message.content
