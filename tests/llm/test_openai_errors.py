"""OpenAICompatibleLLM failures: unreachable servers and documented provider errors.

A scripted stdlib server plays providers that fail the ways real ones do (401, 404, 429,
context too long, HTML instead of JSON, slow answers, rejected optional parameters); each
must become the project's error type with a message a person can act on, never the key.
"""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator

import pytest
from fake_openai_server import FakeOpenAIServer, Reply, chunk, completion, error_reply, fake_server

from desktop_app.core.errors import (
    ContextOverflowError,
    LLMAuthError,
    LLMConnectionError,
    LLMError,
    LLMModelNotFoundError,
    LLMProviderError,
    LLMRateLimitError,
    LLMTimeoutError,
)
from desktop_app.core.llm.openai_adapter import OpenAICompatibleLLM
from desktop_app.core.llm.types import ChatMessage

__all__ = ["fake_server"]  # the fixture, imported so pytest finds it here
pytestmark = pytest.mark.anyio

HELLO = [ChatMessage.user("hello")]
SECRET = "sk-test-0123456789abcdef"


@pytest.fixture
async def llm(fake_server: FakeOpenAIServer) -> AsyncIterator[OpenAICompatibleLLM]:
    adapter = OpenAICompatibleLLM(base_url=fake_server.base_url, model="fake-model",
                                  api_key=SECRET, max_retries=0, timeout=10)
    yield adapter
    await adapter.aclose()


# --- unreachable servers ----------------------------------------------------------------
def unused_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.mark.parametrize("host", ["127.0.0.1:{port}", "no-such-host.invalid"],
                         ids=["closed-port", "unresolvable-name"])
async def test_unreachable_server_is_a_connection_error_that_says_what_to_do(host: str) -> None:
    base_url = f"http://{host.format(port=unused_port())}/v1"
    adapter = OpenAICompatibleLLM(base_url=base_url, model="m", max_retries=0)
    try:
        with pytest.raises(LLMConnectionError) as info:
            await adapter.chat(HELLO)
        with pytest.raises(LLMConnectionError):
            [c async for c in adapter.stream_chat(HELLO)]
    finally:
        await adapter.aclose()
    text = str(info.value)
    assert f"Could not reach {base_url}" in text
    assert "Is the server running?" in text and "base URL in Settings" in text
    assert info.value.retryable


# --- documented errors from a scripted provider -------------------------------------------
ERROR_CASES: list[tuple[Reply, type[LLMError], tuple[str, ...]]] = [
    (error_reply(401, f"Incorrect API key provided: {SECRET}.", code="invalid_api_key"),
     LLMAuthError, ("rejected the API key", "Settings")),
    (error_reply(403, "Project does not have access", type_="permission_error"),
     LLMAuthError, ("403", "Project does not have access")),
    (error_reply(404, "The model `fake-model` does not exist", code="model_not_found"),
     LLMModelNotFoundError, ("fake-model", "list the models")),
    (error_reply(429, "Rate limit reached for requests", code="rate_limit_exceeded"),
     LLMRateLimitError, ("rate limiting", "Wait")),
    (error_reply(429, "You exceeded your current quota", code="insufficient_quota"),
     LLMRateLimitError, ("quota", "billing")),
    (error_reply(400, "This model's maximum context length is 8192 tokens. However, your "
                      "messages resulted in 9000 tokens.", code="context_length_exceeded"),
     ContextOverflowError, ("too long", "8192")),
    (error_reply(400, "the request exceeds the available context size, try increasing it",
                 type_="exceed_context_size_error"),
     ContextOverflowError, ("too long", "context size")),
    (error_reply(400, "Input has too many tokens for this model"),
     ContextOverflowError, ("too many tokens",)),
    (error_reply(400, "Invalid value for 'tools[0].function.name'", param="tools"),
     LLMProviderError, ("400", "Invalid value for 'tools[0].function.name'")),
    (error_reply(500, "CUDA out of memory", type_="server_error"),
     LLMProviderError, ("500", "CUDA out of memory")),
    (Reply(status=504, body="<html><h1>504 Gateway Time-out</h1></html>"),
     LLMTimeoutError, ("did not answer in time", "(504: 504 Gateway Time-out)")),
    (Reply(status=200, body="<html><body>Welcome to nginx!</body></html>"),
     LLMProviderError, ("OpenAI-compatible", "base URL")),
]


@pytest.mark.parametrize(("reply", "error_type", "phrases"), ERROR_CASES,
                         ids=lambda v: v.__name__ if isinstance(v, type) else None)
async def test_provider_errors_become_documented_errors(
        fake_server: FakeOpenAIServer, llm: OpenAICompatibleLLM, reply: Reply,
        error_type: type[LLMError], phrases: tuple[str, ...]) -> None:
    fake_server.add(reply)
    with pytest.raises(error_type) as info:
        await llm.chat(HELLO)
    text = str(info.value)
    for phrase in phrases:
        assert phrase in text
    assert SECRET not in text
    assert type(info.value) is error_type  # not a more general or more specific class


async def test_rate_limit_is_retryable_but_an_exhausted_quota_is_not(
        fake_server: FakeOpenAIServer, llm: OpenAICompatibleLLM) -> None:
    fake_server.add(error_reply(429, "slow down"), error_reply(429, "out of quota",
                                                               code="insufficient_quota"))
    with pytest.raises(LLMRateLimitError) as limited:
        await llm.chat(HELLO)
    with pytest.raises(LLMRateLimitError) as quota:
        await llm.chat(HELLO)
    assert limited.value.retryable and not quota.value.retryable


async def test_errors_when_opening_a_stream_are_converted_too(
        fake_server: FakeOpenAIServer, llm: OpenAICompatibleLLM) -> None:
    fake_server.add(error_reply(401, "bad key"))
    with pytest.raises(LLMAuthError):
        [c async for c in llm.stream_chat(HELLO)]


async def test_server_that_ignores_stream_mode_gives_a_clear_error(
        fake_server: FakeOpenAIServer, llm: OpenAICompatibleLLM) -> None:
    fake_server.add(completion("a whole answer as plain JSON"))
    with pytest.raises(LLMProviderError, match="ended the stream without sending anything"):
        [c async for c in llm.stream_chat(HELLO)]


async def test_slow_server_is_a_timeout_error(fake_server: FakeOpenAIServer) -> None:
    fake_server.add(Reply(body=completion("late"), delay=1.5))
    adapter = OpenAICompatibleLLM(base_url=fake_server.base_url, model="m", timeout=0.3,
                                  max_retries=0)
    try:
        with pytest.raises(LLMTimeoutError, match="did not answer in time") as info:
            await adapter.chat(HELLO)
    finally:
        await adapter.aclose()
    assert info.value.retryable


async def test_transient_server_error_is_retried_once_by_default(
        fake_server: FakeOpenAIServer) -> None:
    fake_server.add(Reply(status=503, body={"error": {"message": "loading"}},
                          headers={"retry-after-ms": "10"}), completion("ready"))
    adapter = OpenAICompatibleLLM(base_url=fake_server.base_url, model="m")
    try:
        assert (await adapter.chat(HELLO)).message.content == "ready"
    finally:
        await adapter.aclose()
    assert len(fake_server.requests) == 2


async def test_server_rejecting_stream_options_is_retried_without_them_and_remembered(
        fake_server: FakeOpenAIServer, llm: OpenAICompatibleLLM) -> None:
    rejection = error_reply(422, "Extra inputs are not permitted: stream_options",
                            param="stream_options")
    fake_server.add(rejection, Reply(sse=[chunk("ok"), chunk(finish_reason="stop")]),
                    Reply(sse=[chunk("again"), chunk(finish_reason="stop")]))
    assert [c.content async for c in llm.stream_chat(HELLO)] == ["ok", ""]
    assert [c.content async for c in llm.stream_chat(HELLO)] == ["again", ""]
    sent = [r.json for r in fake_server.requests]
    assert "stream_options" in sent[0]
    assert "stream_options" not in sent[1] and "stream_options" not in sent[2]


async def test_max_tokens_is_renamed_for_servers_that_require_max_completion_tokens(
        fake_server: FakeOpenAIServer, llm: OpenAICompatibleLLM) -> None:
    fake_server.add(error_reply(400, "Unsupported parameter: 'max_tokens' is not supported "
                                     "with this model. Use 'max_completion_tokens' instead.",
                                param="max_tokens"), completion("ok"))
    assert (await llm.chat(HELLO, max_tokens=7)).message.content == "ok"
    retried = fake_server.requests[1].json
    assert retried["max_completion_tokens"] == 7 and "max_tokens" not in retried
