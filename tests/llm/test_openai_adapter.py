"""OpenAICompatibleLLM against a real OpenAI-compatible server, and what it sends.

``openai_server`` is llama-cpp-python's server on the bundled model over loopback HTTP: the
peer a user meets. The scripted stdlib server records requests (tools, key, messages) and
plays the model list for the settings dialog. Failures: ``test_openai_errors.py``.
"""

from __future__ import annotations

import asyncio
import gc
import json
import time
from collections.abc import AsyncIterator
from typing import Any

import pytest
from fake_openai_server import FakeOpenAIServer, Reply, completion, error_reply, fake_server
from fixtures_server import OpenAIServer

from desktop_app.core.config.secrets import set_api_key
from desktop_app.core.config.settings import EndpointModelConfig, Settings
from desktop_app.core.errors import (
    ContextOverflowError,
    LLMModelNotFoundError,
    LLMProviderError,
)
from desktop_app.core.llm.factory import build_registry
from desktop_app.core.llm.openai_adapter import NO_KEY_PLACEHOLDER, OpenAICompatibleLLM
from desktop_app.core.llm.types import ChatMessage, ToolCall

__all__ = ["fake_server"]  # the fixture, imported so pytest finds it here
pytestmark = pytest.mark.anyio

WEATHER_TOOL = {"type": "function", "function": {
    "name": "get_weather", "description": "Current weather for a city.",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                   "required": ["city"]}}}
FORCE_WEATHER = {"type": "function", "function": {"name": "get_weather"}}
HELLO = [ChatMessage.user("hello")]
SECRET = "sk-test-0123456789abcdef"


@pytest.fixture
async def real_llm(openai_server: OpenAIServer) -> AsyncIterator[OpenAICompatibleLLM]:
    adapter = OpenAICompatibleLLM(base_url=openai_server.base_url, model=openai_server.model,
                                  timeout=120)
    yield adapter
    await adapter.aclose()


@pytest.fixture
async def llm(fake_server: FakeOpenAIServer) -> AsyncIterator[OpenAICompatibleLLM]:
    adapter = OpenAICompatibleLLM(base_url=fake_server.base_url, model="fake-model",
                                  api_key=SECRET, max_retries=0, timeout=10)
    yield adapter
    await adapter.aclose()


# --- the real loopback server (llama-cpp-python on the bundled model) ----------------------
@pytest.mark.real_model
async def test_real_server_plain_chat_returns_text_and_usage(
        real_llm: OpenAICompatibleLLM) -> None:
    result = await real_llm.chat([ChatMessage.system("Answer in one short sentence."),
                                  ChatMessage.user("Say hello.")], max_tokens=12,
                                 temperature=0)
    assert result.message.role == "assistant"
    assert result.message.content.strip()
    assert result.usage.prompt_tokens > 5
    assert 0 < result.usage.completion_tokens <= 12
    assert result.finish_reason in ("stop", "length")


@pytest.mark.real_model
async def test_real_server_streams_text_in_pieces_then_a_final_chunk(
        real_llm: OpenAICompatibleLLM) -> None:
    chunks = [c async for c in real_llm.stream_chat(
        [ChatMessage.user("Count from 1 to 5.")], max_tokens=12, temperature=0)]
    pieces = [c.content for c in chunks if c.content]
    assert len(pieces) >= 3  # tokens arrive one by one, not as one block
    assert "".join(pieces).strip()
    assert chunks[-1].finish_reason in ("stop", "length")
    assert all(c.finish_reason is None for c in chunks[:-1])
    # llama-cpp-python ignores stream_options, so no usage here; the adapter must still
    # keep asking for it (other servers honour it).
    assert chunks[-1].usage is None
    assert real_llm._send_stream_options


@pytest.mark.real_model
async def test_real_server_forced_tool_call_returns_real_tool_calls(
        real_llm: OpenAICompatibleLLM) -> None:
    result = await real_llm.chat([ChatMessage.user("What is the weather in Paris?")],
                                 tools=[WEATHER_TOOL], tool_choice=FORCE_WEATHER, max_tokens=40)
    assert result.finish_reason == "tool_calls"
    [call] = result.message.tool_calls
    assert call.name == "get_weather" and call.id
    assert "city" in call.parsed_arguments()


@pytest.mark.real_model
async def test_real_server_streamed_tool_call_arrives_complete_in_the_final_chunk(
        real_llm: OpenAICompatibleLLM) -> None:
    chunks = [c async for c in real_llm.stream_chat(
        [ChatMessage.user("What is the weather in Berlin?")], tools=[WEATHER_TOOL],
        tool_choice=FORCE_WEATHER, max_tokens=40)]
    [call] = chunks[-1].tool_calls
    assert call.name == "get_weather"
    assert isinstance(call.parsed_arguments().get("city"), str)
    assert all(not c.tool_calls for c in chunks[:-1])


@pytest.mark.real_model
async def test_real_server_json_object_mode_returns_json(real_llm: OpenAICompatibleLLM) -> None:
    result = await real_llm.chat(
        [ChatMessage.system('Reply only with JSON like {"answer": 0}.'),
         ChatMessage.user("What is 2+2?")],
        response_format={"type": "json_object"}, max_tokens=24, temperature=0)
    assert isinstance(json.loads(result.message.content), dict)


@pytest.mark.real_model
async def test_real_server_too_long_prompt_is_context_overflow(
        real_llm: OpenAICompatibleLLM) -> None:
    with pytest.raises(ContextOverflowError, match="too long") as info:
        await real_llm.chat([ChatMessage.user("word " * 5000)], max_tokens=8)
    assert "4096" in str(info.value)  # the server's own numbers are kept


@pytest.mark.real_model
async def test_real_server_lists_models_and_passes_the_connection_test(
        real_llm: OpenAICompatibleLLM, openai_server: OpenAIServer) -> None:
    assert await real_llm.list_models() == [openai_server.model]
    message = await real_llm.test_connection()
    assert openai_server.model in message and "available" in message


@pytest.mark.real_model
async def test_real_server_stops_generating_when_the_stream_is_closed(
        real_llm: OpenAICompatibleLLM, openai_server: OpenAIServer) -> None:
    stream = real_llm.stream_chat([ChatMessage.user("Write a long story about a cat.")],
                                  max_tokens=400)
    async for piece in stream:
        if piece.content:
            break
    await stream.aclose()  # type: ignore[attr-defined]
    # Still generating 400 tokens keeps the server busy for well over 10 s; once it notices
    # the closed connection (after its next token) it is idle. Timing the next request would
    # not tell: llama-cpp-python's server interrupts old work when a new request arrives.
    deadline = time.monotonic() + 10
    while True:
        before = openai_server.cpu_seconds()
        await asyncio.sleep(1.0)
        used = openai_server.cpu_seconds() - before
        if used < 0.1:
            break
        assert time.monotonic() < deadline, f"server still busy ({used:.2f} CPU-s per s)"


# --- what is sent -----------------------------------------------------------------------
async def test_request_carries_tools_forced_choice_and_json_mode(
        fake_server: FakeOpenAIServer, llm: OpenAICompatibleLLM) -> None:
    fake_server.add(completion("{}"))
    await llm.chat(HELLO, tools=[WEATHER_TOOL], tool_choice=FORCE_WEATHER,
                   response_format={"type": "json_object"}, temperature=0.2, max_tokens=5)
    sent = fake_server.requests[0]
    assert sent.path == "/v1/chat/completions"
    assert sent.json["tools"] == [WEATHER_TOOL]
    assert sent.json["tool_choice"] == FORCE_WEATHER
    assert sent.json["response_format"] == {"type": "json_object"}
    assert (sent.json["temperature"], sent.json["max_tokens"]) == (0.2, 5)
    assert sent.json["model"] == "fake-model"


async def test_unset_options_are_not_sent(fake_server: FakeOpenAIServer,
                                          llm: OpenAICompatibleLLM) -> None:
    fake_server.add(completion("x"))
    await llm.chat(HELLO, tool_choice="required")  # a choice without tools is meaningless
    sent = fake_server.requests[0].json
    for key in ("tools", "tool_choice", "response_format", "temperature", "max_tokens"):
        assert key not in sent


async def test_pinned_flag_and_reasoning_are_never_sent(fake_server: FakeOpenAIServer,
                                                        llm: OpenAICompatibleLLM) -> None:
    fake_server.add(completion("x"))
    call = ToolCall(id="c1", name="get_weather", arguments='{"city": "Oslo"}')
    await llm.chat([ChatMessage.user("weather?", pinned=True),
                    ChatMessage.assistant("", tool_calls=[call], reasoning_content="secret plan"),
                    ChatMessage.tool("sunny", tool_call_id="c1", name="get_weather")])
    messages: list[dict[str, Any]] = fake_server.requests[0].json["messages"]
    assert "pinned" not in json.dumps(messages) and "secret plan" not in json.dumps(messages)
    assert messages[1]["tool_calls"][0]["function"]["arguments"] == '{"city": "Oslo"}'
    assert messages[2] == {"role": "tool", "content": "sunny", "tool_call_id": "c1",
                           "name": "get_weather"}


async def test_api_key_is_sent_as_bearer_and_a_placeholder_when_none(
        fake_server: FakeOpenAIServer, llm: OpenAICompatibleLLM) -> None:
    fake_server.add(completion("a"), completion("b"))
    await llm.chat(HELLO)
    keyless = OpenAICompatibleLLM(base_url=fake_server.base_url, model="m", max_retries=0)
    try:
        await keyless.chat(HELLO)
    finally:
        await keyless.aclose()
    assert fake_server.requests[0].headers["authorization"] == f"Bearer {SECRET}"
    assert fake_server.requests[1].headers["authorization"] == f"Bearer {NO_KEY_PLACEHOLDER}"
    assert SECRET not in repr(llm)


async def test_abilities_default_on_and_profile_overrides_win(
        fake_server: FakeOpenAIServer) -> None:
    default = OpenAICompatibleLLM(base_url=fake_server.base_url, model="m")
    limited = OpenAICompatibleLLM(base_url=fake_server.base_url, model="m",
                                  abilities={"tool_call": False, "thinking": True})
    try:
        assert {k: default.abilities[k] for k in ("tool_call", "json_mode", "streaming")} == {
            "tool_call": True, "json_mode": True, "streaming": True}
        assert not default.abilities["vision"] and not default.abilities["thinking"]
        assert limited.abilities["tool_call"] is False and limited.abilities["thinking"]
        assert limited.abilities["json_mode"] is True
        assert default.model_id == "m" and default.context_size == 32768
    finally:
        await default.aclose()
        await limited.aclose()


async def test_endpoint_from_settings_sends_the_keyring_key_and_its_profile_abilities(
        fake_server: FakeOpenAIServer) -> None:
    settings = Settings(endpoints=[EndpointModelConfig(
        name="remote", base_url=fake_server.base_url, model="fake-model",
        api_key_ref="remote", json_mode=False)])
    set_api_key("remote", SECRET)
    adapter = build_registry(settings).get("remote")
    assert isinstance(adapter, OpenAICompatibleLLM)
    fake_server.add(completion("hi"))
    try:
        assert (await adapter.chat(HELLO)).message.content == "hi"
    finally:
        await adapter.aclose()
    assert fake_server.requests[0].headers["authorization"] == f"Bearer {SECRET}"
    assert adapter.abilities["json_mode"] is False and adapter.abilities["tool_call"] is True


# --- settings dialog helpers ----------------------------------------------------------------
def models_page(*ids: str) -> dict[str, Any]:
    return {"object": "list", "data": [{"id": i, "object": "model", "created": 0,
                                        "owned_by": "x"} for i in ids]}


async def test_connection_test_names_the_served_models_when_the_model_is_missing(
        fake_server: FakeOpenAIServer, llm: OpenAICompatibleLLM) -> None:
    fake_server.add(models_page("gpt-a", "gpt-b"),
                    error_reply(404, "The model `fake-model` does not exist",
                                code="model_not_found"))
    with pytest.raises(LLMModelNotFoundError, match="gpt-a, gpt-b"):
        await llm.test_connection()


async def test_connection_test_accepts_a_model_that_answers_without_being_listed(
        fake_server: FakeOpenAIServer, llm: OpenAICompatibleLLM) -> None:
    fake_server.add(models_page("fake-model:latest"), completion("p", usage=(1, 1)))
    assert "answered" in await llm.test_connection()
    assert fake_server.requests[1].json["max_tokens"] == 1


async def test_missing_model_list_endpoint_points_at_the_base_url(
        fake_server: FakeOpenAIServer, llm: OpenAICompatibleLLM) -> None:
    fake_server.add(Reply(status=404, body="Not Found"))
    with pytest.raises(LLMProviderError, match="/v1"):
        await llm.list_models()


def test_one_adapter_serves_successive_event_loops(fake_server: FakeOpenAIServer) -> None:
    # The CLI runs one asyncio.run per command and a registry caches adapters: pooled
    # connections of a closed loop must not be reused by the next one, and dropping them
    # must not disturb the loop that runs when they are garbage-collected.
    adapter = OpenAICompatibleLLM(base_url=fake_server.base_url, model="m", max_retries=0)
    fake_server.add(completion("one"), completion("two"), completion("three"))
    assert asyncio.run(adapter.chat(HELLO)).message.content == "one"
    assert asyncio.run(adapter.chat(HELLO)).message.content == "two"
    loop_errors: list[dict[str, Any]] = []

    async def last() -> str:
        asyncio.get_running_loop().set_exception_handler(lambda _, ctx: loop_errors.append(ctx))
        try:
            answer = (await adapter.chat(HELLO)).message.content
            for _ in range(3):  # stale clients collected now must not fail on this loop
                gc.collect()
                await asyncio.sleep(0.02)
            return answer
        finally:
            await adapter.aclose()

    assert asyncio.run(last()) == "three"
    assert loop_errors == []
