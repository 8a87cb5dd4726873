"""The OpenAI-compatible adapter: any chat-completions server through ``openai.AsyncOpenAI``.

Works with OpenAI itself and with local or self-hosted servers (llama.cpp / llama-cpp-python,
vLLM, Ollama, LM Studio, OpenRouter ...). Parsing lives in ``openai_stream`` (I/O-free),
error conversion in ``openai_errors``; this module only builds requests, talks to the SDK
and adapts to servers that reject optional parameters.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

import openai

from desktop_app.core.errors import (
    LLMError,
    LLMModelNotFoundError,
    LLMProviderError,
    ToolCallsUnsupportedError,
)
from desktop_app.core.llm.base import LLM, ToolChoice, ToolSpec
from desktop_app.core.llm.openai_errors import (
    convert_error,
    mentions_parameter,
    rejects_tools,
    server_message,
)
from desktop_app.core.llm.openai_stream import StreamAccumulator, parse_completion
from desktop_app.core.llm.text_calls import TextCallStream, offered_names, with_text_calls
from desktop_app.core.llm.types import ChatMessage, LLMResult, StreamChunk, make_abilities

log = logging.getLogger(__name__)

#: Sent when no key is configured: local servers ignore it, and the SDK refuses to run without
#: one (it would otherwise read OPENAI_API_KEY from the environment, which is not wanted here).
NO_KEY_PLACEHOLDER = "not-needed"


class OpenAICompatibleLLM(LLM):
    """A model behind an OpenAI-compatible ``/chat/completions`` endpoint.

    Abilities default to ``tool_call``, ``json_mode`` and ``streaming`` on; ``abilities``
    overrides any of them (the user's model profile knows better than we do).
    """

    def __init__(
        self,
        *,
        base_url: str,
        model: str,
        api_key: str | None = None,
        name: str | None = None,
        context_size: int = 32768,
        timeout: float = 120.0,
        abilities: dict[str, bool] | None = None,
        max_retries: int = 1,
        on_tools_rejected: Callable[[], None] | None = None,
    ) -> None:
        """``on_tools_rejected`` is called once when the server refuses tool definitions
        (the app remembers it in the model's settings)."""
        self.base_url = base_url.strip().rstrip("/")
        self.model = model
        self.name = name or model
        self._context_size = context_size
        self._abilities = {**make_abilities(tool_call=True, json_mode=True, streaming=True),
                           **(abilities or {})}
        self._secret = api_key or None  # only for redacting error texts; never logged
        self._client_options: dict[str, Any] = {
            "base_url": self.base_url, "api_key": api_key or NO_KEY_PLACEHOLDER,
            "timeout": timeout, "max_retries": max_retries}
        self._bound: tuple[asyncio.AbstractEventLoop, openai.AsyncOpenAI] | None = None
        # Learned per server: parameters it rejected, so later calls do not fail first.
        self._send_stream_options = True
        self._send_temperature = True
        self._max_tokens_key = "max_tokens"
        self._on_tools_rejected = on_tools_rejected

    @property
    def _client(self) -> openai.AsyncOpenAI:
        """The SDK client for the running event loop.

        Pooled connections belong to the loop that opened them, so a new loop (the CLI runs
        one ``asyncio.run`` per command; tests do too) gets a fresh client.
        """
        from desktop_app.core import egress

        # Before any connection (or DNS lookup) the offline lock decides.
        egress.guard(str(self._client_options.get("base_url") or "https://api.openai.com/v1"),
                     "request to the model")
        loop = asyncio.get_running_loop()
        if self._bound is None or self._bound[0] is not loop:
            self._release_stale_client()
            # Our own HTTP client, not the SDK's default wrapper: that one schedules its
            # close on whatever loop is running when it is garbage-collected, which fails
            # for connections of an older loop ("Event loop is closed").
            # Through the egress point: the lock checks each request and the privacy
            # ledger records it (the key is removed from what is recorded).
            http_client = egress.async_client(
                "chat completion", secrets=[self._secret] if self._secret else [],
                factory=openai.DefaultAsyncHttpxClient)
            self._bound = (loop, openai.AsyncOpenAI(**self._client_options,
                                                    http_client=http_client))
        return self._bound[1]

    def _release_stale_client(self) -> None:
        bound, self._bound = self._bound, None
        if bound is None:
            return
        old_loop, client = bound
        if not old_loop.is_closed() and not old_loop.is_running():
            old_loop.run_until_complete(client.close())
        # A closed loop's connections cannot be closed politely any more; the sockets are
        # released when the client is garbage-collected.

    def __repr__(self) -> str:  # no key in reprs, logs or tracebacks
        return (f"OpenAICompatibleLLM(name={self.name!r}, model={self.model!r}, "
                f"base_url={self.base_url!r})")

    @property
    def model_id(self) -> str:
        return self.model

    @property
    def context_size(self) -> int:
        return self._context_size

    @property
    def abilities(self) -> dict[str, bool]:
        return dict(self._abilities)

    # --- requests ------------------------------------------------------------------------
    def _request(self, messages: Sequence[ChatMessage], *, tools: list[ToolSpec] | None,
                 tool_choice: ToolChoice, response_format: dict[str, Any] | None,
                 temperature: float | None, max_tokens: int | None,
                 stream: bool) -> dict[str, Any]:
        kwargs: dict[str, Any] = {
            "model": self.model,
            "messages": [message.to_provider() for message in messages],
        }
        if tools:
            kwargs["tools"] = tools
            # tool_choice without tools is an error on OpenAI; None means the server default.
            if tool_choice is not None:
                kwargs["tool_choice"] = tool_choice
        if response_format is not None:
            kwargs["response_format"] = response_format
        if temperature is not None and self._send_temperature:
            kwargs["temperature"] = temperature
        if max_tokens is not None:
            kwargs[self._max_tokens_key] = max_tokens
        if stream:
            kwargs["stream"] = True
            if self._send_stream_options:
                kwargs["stream_options"] = {"include_usage": True}
        return kwargs

    def _adapt_to_rejection(self, kwargs: dict[str, Any], exc: openai.APIError) -> bool:
        """Drop or rename an optional parameter the server rejected; True to retry."""
        if "stream_options" in kwargs and mentions_parameter(exc, "stream_options"):
            # Older servers validate strictly and do not know stream_options (usage in streams).
            del kwargs["stream_options"]
            self._send_stream_options = False
        elif ("max_tokens" in kwargs and mentions_parameter(exc, "max_tokens")
              and "max_completion_tokens" in server_message(exc)):
            # OpenAI's reasoning models accept only max_completion_tokens.
            kwargs["max_completion_tokens"] = kwargs.pop("max_tokens")
            self._max_tokens_key = "max_completion_tokens"
        elif ("temperature" in kwargs and mentions_parameter(exc, "temperature")
              and "support" in server_message(exc).lower()):
            # Some models accept only their default temperature.
            del kwargs["temperature"]
            self._send_temperature = False
        else:
            return False
        log.info("%s rejected a parameter (%s); retrying without it", self.base_url,
                 self._redact(server_message(exc)))
        return True

    def _tools_rejected(self, exc: openai.APIError) -> ToolCallsUnsupportedError:
        """Turn tool calling off for this model (the agent then uses JSON mode) and say so."""
        if self._abilities.get("tool_call"):
            self._abilities["tool_call"] = False
            if self._on_tools_rejected is not None:
                try:
                    self._on_tools_rejected()
                except Exception:  # remembering is a convenience; the run goes on
                    log.warning("could not save that %s rejects tools", self.name,
                                exc_info=True)
        return ToolCallsUnsupportedError(
            f"Model '{self.name}' does not accept tool definitions "
            f"({self._redact(server_message(exc))}).",
            hint="It now uses tools through JSON replies instead.")

    def _redact(self, text: str) -> str:
        # Some servers echo the key they rejected; it must never reach a log or the UI.
        return text.replace(self._secret, "***") if self._secret else text

    def _convert(self, exc: BaseException) -> LLMError:
        error = convert_error(exc, base_url=self.base_url, model=self.model)
        if self._secret and self._secret in str(error):
            redacted = type(error)(self._redact(error.message),
                                   hint=self._redact(error.hint) if error.hint else None)
            redacted.retryable = error.retryable
            return redacted
        return error

    async def _create(self, kwargs: dict[str, Any]) -> Any:
        # At most one retry per optional parameter, so this loop always ends.
        for _ in range(4):
            try:
                return await self._client.chat.completions.create(**kwargs)
            except openai.APIError as exc:
                if self._adapt_to_rejection(kwargs, exc):
                    continue
                if "tools" in kwargs and rejects_tools(exc):
                    raise self._tools_rejected(exc) from exc
                raise self._convert(exc) from exc
            except openai.OpenAIError as exc:  # SDK-side failures that carry no response
                raise self._convert(exc) from exc
        raise LLMProviderError(f"The server at {self.base_url} kept rejecting the request.",
                               hint="Check the model settings for this endpoint.")

    # --- LLM interface -------------------------------------------------------------------
    async def chat(
        self,
        messages: Sequence[ChatMessage],
        *,
        tools: list[ToolSpec] | None = None,
        tool_choice: ToolChoice = None,
        response_format: dict[str, Any] | None = None,
        temperature: float | None = None,
        max_tokens: int | None = None,
    ) -> LLMResult:
        """One complete answer; reasoning split out, tool-call arguments kept raw."""
        kwargs = self._request(messages, tools=tools, tool_choice=tool_choice,
                               response_format=response_format, temperature=temperature,
                               max_tokens=max_tokens, stream=False)
        completion = await self._create(kwargs)
        if isinstance(completion, (str, bytes)) or not hasattr(completion, "choices"):
            # A 200 that is not JSON: usually a web page because the base URL is wrong.
            raise LLMProviderError(
                f"The server at {self.base_url} did not answer like an OpenAI-compatible API.",
                hint="Check the base URL in Settings (it usually ends in '/v1').")
        return with_text_calls(parse_completion(completion, fallback_model=self.model),
                               offered_names(tools, tool_choice))

    async def stream_chat(
        self,
        messages: Sequence[ChatMessage],
        *,
        tools: list[ToolSpec] | None = None,
        tool_choice: ToolChoice = None,
        response_format: dict[str, Any] | None = None,
        temperature: float | None = None,
        max_tokens: int | None = None,
    ) -> AsyncIterator[StreamChunk]:
        """Content and reasoning deltas as they arrive, then one final chunk.

        The final chunk has ``finish_reason``, complete ``tool_calls`` and ``usage`` (None if
        the server does not report usage in streams, e.g. llama-cpp-python's server).
        Closing the iterator (or cancelling its consumer) closes the HTTP response, which
        tells the server to stop generating.
        """
        kwargs = self._request(messages, tools=tools, tool_choice=tool_choice,
                               response_format=response_format, temperature=temperature,
                               max_tokens=max_tokens, stream=True)
        stream = await self._create(kwargs)
        accumulator = StreamAccumulator()
        text_calls = TextCallStream(offered_names(tools, tool_choice))
        try:
            try:
                async for chunk in stream:
                    delta = accumulator.feed(chunk)
                    if delta is not None:
                        delta = text_calls.feed(delta)
                    if delta is not None:
                        yield delta
                    if text_calls.complete():
                        break  # closing the stream (below) stops the server generating
            except openai.OpenAIError as exc:
                raise self._convert(exc) from exc
            except (ValueError, TypeError, AttributeError) as exc:  # JSONDecodeError included
                raise LLMProviderError(
                    f"The server at {self.base_url} sent a stream that is not valid "
                    f"OpenAI-style JSON ({type(exc).__name__}: {self._redact(str(exc))[:200]}).",
                    hint="Check the base URL in Settings: it must point to an "
                         "OpenAI-compatible API (usually ending in /v1).") from None
            if accumulator.chunks_seen == 0:
                # Every streaming server sends at least one chunk; none means the server
                # ignored "stream" (answered with plain JSON) or is not OpenAI-compatible.
                raise LLMProviderError(
                    f"The server at {self.base_url} ended the stream without sending anything.",
                    hint="Check the base URL in Settings; if this server cannot stream, turn "
                         "streaming off for this model.")
            yield text_calls.finish(accumulator.finish())
        finally:
            await stream.close()

    async def aclose(self) -> None:
        bound, self._bound = self._bound, None
        if bound is not None and bound[0] is asyncio.get_running_loop():
            await bound[1].close()
        # A client of an older, closed loop has nothing left to close.

    # --- settings dialog -----------------------------------------------------------------
    async def list_models(self) -> list[str]:
        """The model ids the server lists at ``GET /models``, sorted."""
        try:
            return sorted([model.id async for model in self._client.models.list()])
        except openai.NotFoundError as exc:
            # Here a 404 is about the endpoint, not the model: the default text would mislead.
            raise LLMProviderError(
                f"The server at {self.base_url} has no model list (GET /models: 404).",
                hint="Check that the base URL ends in the API root (usually '/v1').") from exc
        except openai.APIError as exc:
            raise self._convert(exc) from exc

    async def test_connection(self) -> str:
        """Check the server and the model; a one-line success message, else a project error."""
        try:
            served: list[str] | None = await self.list_models()
        except LLMProviderError:
            served = None  # no usable model list on this server: ask the model directly
        if served is not None and self.model in served:
            return (f"Connected to {self.base_url}: model '{self.model}' is available "
                    f"({len(served)} model{'s' if len(served) != 1 else ''} served).")
        try:
            # Some servers serve models they do not list (aliases, Ollama tags): one token.
            await self.chat([ChatMessage.user("ping")], max_tokens=1)
        except LLMModelNotFoundError as exc:
            if served:
                shown = ", ".join(served[:15]) + (" ..." if len(served) > 15 else "")
                raise LLMModelNotFoundError(
                    f"{self.base_url} does not serve model '{self.model}'.",
                    hint=f"It serves: {shown}. Pick one of these in Settings.") from exc
            raise
        note = "not in its model list, but it answered" if served else "it answered"
        return f"Connected to {self.base_url}: model '{self.model}' is {note}."
