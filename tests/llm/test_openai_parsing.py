"""Parsing of OpenAI-style answers: streamed deltas, usage, reasoning, tool calls.

Most tests go through the real SDK and real HTTP against the scripted stdlib server, so the
SDK's own parsing (extra fields, SSE) is part of what is tested. The split-position sweep
drives the I/O-free ``StreamAccumulator`` directly with SDK chunk objects.
"""

from __future__ import annotations

import asyncio
import json
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
from openai._models import construct_type
from openai.types.chat import ChatCompletionChunk

from desktop_app.core.errors import LLMBadOutputError
from desktop_app.core.llm.openai_adapter import OpenAICompatibleLLM
from desktop_app.core.llm.openai_stream import StreamAccumulator
from desktop_app.core.llm.types import ChatMessage, StreamChunk, Usage

__all__ = ["fake_server", "scripted_llm"]  # fixtures, imported so pytest finds them
# Async tests run on asyncio through anyio's pytest plugin (anyio ships with openai).
pytestmark = pytest.mark.anyio

HELLO = [ChatMessage.user("hello")]


async def collect(llm: OpenAICompatibleLLM, **kwargs: Any) -> list[StreamChunk]:
    return [c async for c in llm.stream_chat(HELLO, **kwargs)]


def joined(chunks: list[StreamChunk]) -> tuple[str, str]:
    return "".join(c.content for c in chunks), "".join(c.reasoning for c in chunks)


# --- streaming ---------------------------------------------------------------------------
async def test_stream_reports_usage_from_the_include_usage_chunk(
        fake_server: FakeOpenAIServer, llm: OpenAICompatibleLLM) -> None:
    fake_server.add(Reply(sse=[chunk("Hel"), chunk("lo"), chunk(finish_reason="stop"),
                               chunk(no_choices=True, usage=(12, 2))]))
    chunks = await collect(llm)
    assert joined(chunks) == ("Hello", "")
    final = chunks[-1]
    assert final.usage == Usage(prompt_tokens=12, completion_tokens=2, total_tokens=14)
    assert final.finish_reason == "stop"
    assert fake_server.requests[0].json["stream_options"] == {"include_usage": True}


async def test_stream_delivers_each_delta_as_it_arrives(
        fake_server: FakeOpenAIServer, llm: OpenAICompatibleLLM) -> None:
    fake_server.add(Reply(sse=[chunk("a"), chunk("b"), chunk("c"), chunk(finish_reason="stop")]))
    chunks = await collect(llm)
    assert [c.content for c in chunks] == ["a", "b", "c", ""]
    assert [c.finish_reason for c in chunks] == [None, None, None, "stop"]


async def test_reasoning_content_deltas_become_reasoning(
        fake_server: FakeOpenAIServer, llm: OpenAICompatibleLLM) -> None:
    fake_server.add(Reply(sse=[chunk(reasoning_content="Let me "),
                               chunk(reasoning_content="think."),
                               chunk(content=None, reasoning_content=None),
                               chunk("Four."), chunk(finish_reason="stop")]))
    chunks = await collect(llm)
    assert joined(chunks) == ("Four.", "Let me think.")
    assert [c.reasoning for c in chunks if c.reasoning] == ["Let me ", "think."]


async def test_vllm_style_reasoning_field_is_reasoning_too(
        fake_server: FakeOpenAIServer, llm: OpenAICompatibleLLM) -> None:
    fake_server.add(Reply(sse=[chunk(reasoning="hmm"), chunk("ok"), chunk(finish_reason="stop")]))
    assert joined(await collect(llm)) == ("ok", "hmm")


@pytest.mark.parametrize("cut", [1, 3, 6, 7, 9, 14, 17, 20, 22])
async def test_think_tags_split_across_sse_chunks(fake_server: FakeOpenAIServer,
                                                  llm: OpenAICompatibleLLM, cut: int) -> None:
    raw = "<think>2+2=4</think>\n\nIt is 4."  # cuts land inside both tags and around them
    fake_server.add(Reply(sse=[chunk(raw[:cut]), chunk(raw[cut:]), chunk(finish_reason="stop")]))
    assert joined(await collect(llm)) == ("It is 4.", "2+2=4")


def sdk_chunk(data: dict[str, Any]) -> ChatCompletionChunk:
    # The SDK builds chunks this way (no validation), so extra fields like reasoning survive.
    return construct_type(type_=ChatCompletionChunk, value=data)  # type: ignore[return-value]


def test_accumulator_splits_think_tags_at_every_position_of_every_chunk_pair() -> None:
    raw = "<think>\nweigh a < b\n</think>\n\nAnswer: b"
    for cut in range(len(raw) + 1):
        accumulator = StreamAccumulator()
        out = [accumulator.feed(sdk_chunk(chunk(piece))) for piece in (raw[:cut], raw[cut:])]
        out.append(accumulator.finish())
        chunks = [c for c in out if c is not None]
        assert joined(chunks) == ("Answer: b", "weigh a < b"), f"cut at {cut}"


def tool_delta(index: int | None, *, id: str | None = None, name: str | None = None,
               arguments: str | None = None) -> dict[str, Any]:
    function: dict[str, Any] = {}
    if name is not None:
        function["name"] = name
    if arguments is not None:
        function["arguments"] = arguments
    delta: dict[str, Any] = {"function": function, "type": "function"}
    if index is not None:
        delta["index"] = index
    if id is not None:
        delta["id"] = id
    return delta


async def test_tool_call_deltas_arrive_complete_in_the_final_chunk(
        fake_server: FakeOpenAIServer, llm: OpenAICompatibleLLM) -> None:
    fake_server.add(Reply(sse=[
        chunk(tool_calls=[tool_delta(0, id="call_a", name="add", arguments="")]),
        chunk(tool_calls=[tool_delta(0, arguments='{"a": 1, ')]),
        chunk(tool_calls=[tool_delta(1, id="call_b", name="mul", arguments='{"x"')]),
        chunk(tool_calls=[tool_delta(0, arguments='"b": 2}')]),
        chunk(tool_calls=[tool_delta(1, arguments=': 3}')]),
        chunk(finish_reason="tool_calls"),
    ]))
    chunks = await collect(llm, tools=[{"type": "function", "function": {
        "name": "add", "parameters": {"type": "object"}}}])
    assert all(not c.tool_calls for c in chunks[:-1])
    calls = chunks[-1].tool_calls
    assert [(c.id, c.name, c.parsed_arguments()) for c in calls] == [
        ("call_a", "add", {"a": 1, "b": 2}), ("call_b", "mul", {"x": 3})]
    assert chunks[-1].finish_reason == "tool_calls"


async def test_streamed_malformed_tool_arguments_are_kept_raw(
        fake_server: FakeOpenAIServer, llm: OpenAICompatibleLLM) -> None:
    fake_server.add(Reply(sse=[
        chunk(tool_calls=[tool_delta(0, id="c1", name="search", arguments="{'q': ")]),
        chunk(tool_calls=[tool_delta(0, arguments="'cats',}")]),
        chunk(finish_reason="tool_calls"),
    ]))
    call = (await collect(llm))[-1].tool_calls[0]
    assert call.arguments == "{'q': 'cats',}"
    with pytest.raises(ValueError):
        call.parsed_arguments()


def test_tool_deltas_without_index_or_id_are_grouped_sensibly() -> None:
    accumulator = StreamAccumulator()
    for delta in ([tool_delta(None, id="x", name="f", arguments='{"a"')],
                  [tool_delta(None, arguments=": 1}")],
                  [tool_delta(None, id="y", name="g", arguments="{}")]):
        accumulator.feed(sdk_chunk(chunk(tool_calls=delta)))
    calls = accumulator.finish().tool_calls
    assert [(c.id, c.name, c.arguments) for c in calls] == [("x", "f", '{"a": 1}'),
                                                            ("y", "g", "{}")]


def test_repeated_names_and_missing_ids_are_handled() -> None:
    # llama-cpp-python repeats id and name in every delta; some servers never send an id.
    accumulator = StreamAccumulator()
    for piece in ('{"city"', ': "Paris"}'):
        delta = tool_delta(0, name="weather", arguments=piece)
        accumulator.feed(sdk_chunk(chunk(tool_calls=[delta])))
    final = accumulator.finish()
    assert [(c.id, c.name, c.arguments) for c in final.tool_calls] == [
        ("call_0", "weather", '{"city": "Paris"}')]
    assert final.finish_reason == "tool_calls"  # inferred: the server sent none


async def test_error_event_inside_a_stream_becomes_a_provider_error(
        fake_server: FakeOpenAIServer, llm: OpenAICompatibleLLM) -> None:
    from desktop_app.core.errors import LLMProviderError

    fake_server.add(Reply(sse=[chunk("par"), {"error": {"message": "backend crashed",
                                                       "type": "server_error"}}], done=False))
    received: list[str] = []
    with pytest.raises(LLMProviderError, match="backend crashed"):
        async for piece in llm.stream_chat(HELLO):
            received.append(piece.content)
    assert received == ["par"]


async def test_cancelling_the_consumer_hangs_up_on_the_server(
        fake_server: FakeOpenAIServer, llm: OpenAICompatibleLLM) -> None:
    fake_server.add(Reply(sse=[chunk(f"t{i} ") for i in range(200)], event_delay=0.02))
    first = asyncio.Event()

    async def consume() -> None:
        async for piece in llm.stream_chat(HELLO):
            if piece.content:
                first.set()

    task = asyncio.create_task(consume())
    await asyncio.wait_for(first.wait(), 10)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    # 200 events take 4 s to send; the server notices the closed connection long before.
    hung_up = await asyncio.to_thread(fake_server.client_hung_up.wait, 2.0)
    assert hung_up


async def test_closing_the_stream_early_hangs_up_on_the_server(
        fake_server: FakeOpenAIServer, llm: OpenAICompatibleLLM) -> None:
    fake_server.add(Reply(sse=[chunk(f"t{i} ") for i in range(200)], event_delay=0.02))
    stream = llm.stream_chat(HELLO)
    async for piece in stream:
        if piece.content:
            break
    await stream.aclose()  # type: ignore[attr-defined]
    hung_up = await asyncio.to_thread(fake_server.client_hung_up.wait, 2.0)
    assert hung_up


# --- non-streaming -----------------------------------------------------------------------
async def test_chat_reads_reasoning_content_from_the_message(
        fake_server: FakeOpenAIServer, llm: OpenAICompatibleLLM) -> None:
    fake_server.add(completion("4", reasoning_content="2+2 is 4"))
    result = await llm.chat(HELLO)
    assert result.message.content == "4"
    assert result.message.reasoning_content == "2+2 is 4"
    assert result.usage == Usage.of(5, 3)


async def test_chat_splits_think_tags_out_of_the_content(
        fake_server: FakeOpenAIServer, llm: OpenAICompatibleLLM) -> None:
    fake_server.add(completion("<think>\nsimple sum\n</think>\n\n4"))
    message = (await llm.chat(HELLO)).message
    assert (message.content, message.reasoning_content) == ("4", "simple sum")


async def test_chat_keeps_malformed_tool_arguments_raw(
        fake_server: FakeOpenAIServer, llm: OpenAICompatibleLLM) -> None:
    fake_server.add(completion(None, finish_reason="tool_calls", tool_calls=[
        {"id": "c1", "type": "function", "function": {"name": "f", "arguments": '{"a": 1'}}]))
    result = await llm.chat(HELLO)
    assert result.message.content == ""
    assert [(c.id, c.name, c.arguments) for c in result.message.tool_calls] == [
        ("c1", "f", '{"a": 1')]
    assert result.finish_reason == "tool_calls"


async def test_chat_reencodes_object_arguments_as_json_text(
        fake_server: FakeOpenAIServer, llm: OpenAICompatibleLLM) -> None:
    # Some servers send arguments as a JSON object instead of a string.
    fake_server.add(completion(None, tool_calls=[
        {"id": "c1", "type": "function", "function": {"name": "f", "arguments": {"a": "ü"}}}]))
    call = (await llm.chat(HELLO)).message.tool_calls[0]
    assert json.loads(call.arguments) == {"a": "ü"}


async def test_chat_without_choices_is_bad_output(
        fake_server: FakeOpenAIServer, llm: OpenAICompatibleLLM) -> None:
    body = completion("x")
    body["choices"] = []
    fake_server.add(body)
    with pytest.raises(LLMBadOutputError, match="no answer"):
        await llm.chat(HELLO)
