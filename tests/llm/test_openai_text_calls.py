"""Tool calls a server returns as text become real calls (``llm/text_calls.py``).

The scripted server plays what such servers send; the real one is llama-cpp-python's server
on the bundled model started as its README starts it, with the GGUF's own chat template,
which returns the model's calls in ``content``.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fake_openai_server import (
    FakeOpenAIServer,
    Reply,
    chunk,
    completion,
    fake_server,
    scripted_llm,
)
from fixtures_server import OpenAIServer, _start, _stop

from desktop_app.core.llm.openai_adapter import OpenAICompatibleLLM
from desktop_app.core.llm.types import ChatMessage, StreamChunk

__all__ = ["fake_server", "scripted_llm"]  # fixtures, imported so pytest finds them
pytestmark = pytest.mark.anyio

CALCULATOR = {"type": "function", "function": {
    "name": "calculator", "description": "Exact arithmetic",
    "parameters": {"type": "object", "properties": {"expression": {"type": "string"}},
                   "required": ["expression"]}}}
QUESTION = [ChatMessage.user("What is 1234 * 5678?")]
CALL_TEXT = '{"name": "calculator", "arguments": {"expression": "1234 * 5678"}}'


async def streamed(llm: OpenAICompatibleLLM, **kwargs: Any) -> tuple[str, StreamChunk]:
    chunks = [c async for c in llm.stream_chat(QUESTION, **kwargs)]
    return "".join(c.content for c in chunks), chunks[-1]


@pytest.mark.parametrize("text", [
    CALL_TEXT,
    f"<tool_call>\n{CALL_TEXT}\n</tool_call>",
    f"```json\n{CALL_TEXT}\n```",
])
async def test_a_call_written_as_text_is_a_call(fake_server: FakeOpenAIServer,
                                                 llm: OpenAICompatibleLLM, text: str) -> None:
    fake_server.add(completion(text))
    result = await llm.chat(QUESTION, tools=[CALCULATOR])
    assert result.message.content == ""
    [call] = result.message.tool_calls
    assert call.name == "calculator" and call.id
    assert json.loads(call.arguments) == {"expression": "1234 * 5678"}
    assert result.finish_reason == "tool_calls"


@pytest.mark.parametrize(("text", "tools", "choice"), [
    (CALL_TEXT, None, None),  # no tools offered: JSON is the answer
    (CALL_TEXT, [CALCULATOR], "none"),  # tools switched off for this turn
    ('{"name": "Alice", "arguments": {"age": 30}}', [CALCULATOR], None),  # not a tool
    ('{"name": "calculator", "age": 30}', [CALCULATOR], None),  # JSON the user asked for
])
async def test_text_that_is_not_a_call_of_an_offered_tool_stays_the_answer(
        fake_server: FakeOpenAIServer, llm: OpenAICompatibleLLM, text: str,
        tools: list[Any] | None, choice: str | None) -> None:
    fake_server.add(completion(text))
    result = await llm.chat(QUESTION, tools=tools, tool_choice=choice)  # type: ignore[arg-type]
    assert (result.message.content, result.message.tool_calls) == (text, [])


async def test_structured_calls_are_kept_as_sent(fake_server: FakeOpenAIServer,
                                                 llm: OpenAICompatibleLLM) -> None:
    sent = [{"id": "c9", "type": "function",
             "function": {"name": "calculator", "arguments": '{"expression": "2+2"}'}}]
    fake_server.add(completion("Let me compute that.", tool_calls=sent))
    result = await llm.chat(QUESTION, tools=[CALCULATOR])
    assert result.message.content == "Let me compute that."
    assert [(c.id, c.arguments) for c in result.message.tool_calls] == [
        ("c9", '{"expression": "2+2"}')]


async def test_a_streamed_call_written_as_text_is_held_back_and_arrives_as_a_call(
        fake_server: FakeOpenAIServer, llm: OpenAICompatibleLLM) -> None:
    pieces = [CALL_TEXT[i:i + 7] for i in range(0, len(CALL_TEXT), 7)]
    fake_server.add(Reply(sse=[*map(chunk, pieces), chunk(finish_reason="stop")]))
    shown, final = await streamed(llm, tools=[CALCULATOR])
    assert shown == ""  # none of the call reached the user as text
    [call] = final.tool_calls
    assert call.name == "calculator" and final.finish_reason == "tool_calls"


async def test_a_streamed_answer_flows_and_held_back_json_is_released_whole(
        fake_server: FakeOpenAIServer, llm: OpenAICompatibleLLM) -> None:
    fake_server.add(Reply(sse=[chunk("The answer "), chunk("is 7."), chunk(finish_reason="stop")]))
    chunks = [c async for c in llm.stream_chat(QUESTION, tools=[CALCULATOR])]
    assert [c.content for c in chunks[:2]] == ["The answer ", "is 7."]  # not held back
    asked_for = '{"name": "Alice", "arguments": {"age": 30}}'
    fake_server.add(Reply(sse=[chunk(asked_for[:10]), chunk(asked_for[10:]),
                               chunk(finish_reason="stop")]))
    shown, final = await streamed(llm, tools=[CALCULATOR])
    assert shown == asked_for and final.tool_calls == []


@pytest.mark.parametrize("text", [
    f"You could call it like this: <tool_call>\n{CALL_TEXT}\n</tool_call>",  # quoted, not made
    f"Sure! ```json\n{CALL_TEXT}\n```",
])
async def test_a_call_quoted_after_prose_is_part_of_the_answer(
        fake_server: FakeOpenAIServer, llm: OpenAICompatibleLLM, text: str) -> None:
    fake_server.add(completion(text))
    result = await llm.chat(QUESTION, tools=[CALCULATOR])
    assert (result.message.content, result.message.tool_calls) == (text, [])
    fake_server.add(Reply(sse=[chunk(text[:12]), chunk(text[12:]), chunk(finish_reason="stop")]))
    shown, final = await streamed(llm, tools=[CALCULATOR])
    assert shown == text and final.tool_calls == []


async def test_a_call_cut_off_by_the_token_limit_is_not_made(
        fake_server: FakeOpenAIServer, llm: OpenAICompatibleLLM) -> None:
    cut = CALL_TEXT[:-8]
    fake_server.add(completion(cut, finish_reason="length"))
    result = await llm.chat(QUESTION, tools=[CALCULATOR])
    assert (result.message.content, result.message.tool_calls) == (cut, [])
    fake_server.add(Reply(sse=[chunk(cut), chunk(finish_reason="length")]))
    shown, final = await streamed(llm, tools=[CALCULATOR])
    assert shown == cut and final.tool_calls == []


@pytest.mark.parametrize("text", ["[1] The manual says so.", '{"title": "Q3", "rows": 4}',
                                  "```python\nprint(1)\n```"])
async def test_text_that_cannot_be_a_call_is_not_held_back(
        fake_server: FakeOpenAIServer, llm: OpenAICompatibleLLM, text: str) -> None:
    # The last piece never arrives while the first is checked: it is shown before the end.
    fake_server.add(Reply(sse=[chunk(text), chunk(" more"), chunk(finish_reason="stop")],
                          event_delay=0.3))
    stream = llm.stream_chat(QUESTION, tools=[CALCULATOR])
    first = await anext(stream)
    assert first.content == text
    assert "".join([first.content] + [c.content async for c in stream]) == text + " more"


async def test_reading_stops_once_a_call_is_whole(fake_server: FakeOpenAIServer,
                                                 llm: OpenAICompatibleLLM) -> None:
    # The bundled model repeats a bare call line after line until its token limit.
    lines = [chunk(CALL_TEXT + "\n") for _ in range(40)]
    fake_server.add(Reply(sse=[*lines, chunk(finish_reason="length")], event_delay=0.05))
    shown, final = await streamed(llm, tools=[CALCULATOR])
    assert shown == "" and [c.name for c in final.tool_calls] == ["calculator"]
    assert await asyncio.to_thread(fake_server.client_hung_up.wait, 1.0)  # closed early


# --- the real server with the GGUF's own template --------------------------------------------
@pytest.fixture(scope="module")
def template_server(bundled_model_path: Path,
                    tmp_path_factory: pytest.TempPathFactory) -> Iterator[OpenAIServer]:
    server = _start(bundled_model_path, tmp_path_factory.mktemp("server") / "server.log",
                    chat_format=None)
    try:
        yield server
    finally:
        _stop(server.process)


@pytest.mark.real_model
async def test_the_real_server_on_its_own_template_gets_real_calls(
        template_server: OpenAIServer) -> None:
    llm = OpenAICompatibleLLM(base_url=template_server.base_url, model=template_server.model,
                              timeout=120)
    try:
        result = await llm.chat(QUESTION, tools=[CALCULATOR], temperature=0, max_tokens=80)
        [call] = result.message.tool_calls
        assert call.name == "calculator" and "1234" in call.arguments
        assert result.message.content == ""
        shown = [c async for c in llm.stream_chat(QUESTION, tools=[CALCULATOR], temperature=0,
                                                  max_tokens=80)]
        assert "".join(c.content for c in shown) == ""
        assert [c.name for c in shown[-1].tool_calls] == ["calculator"]
    finally:
        await llm.aclose()
