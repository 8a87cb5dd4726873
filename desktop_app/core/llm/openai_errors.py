"""Turn ``openai`` SDK exceptions into the project's error types, with messages people can act on.

The adapter calls :func:`convert_error` at its boundary (``raise convert_error(...) from exc``)
so the engine, CLI and UI only ever see :mod:`desktop_app.core.errors`. Messages name the
server and the model, never the API key.
"""

from __future__ import annotations

import re
from typing import Any

import openai

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

#: Phrases servers use for "the prompt does not fit" (OpenAI, vLLM, llama.cpp, llama-cpp-python,
#: Ollama, LM Studio, OpenRouter word it differently; lower-case).
_CONTEXT_PHRASES = (
    "context length",
    "context_length",
    "maximum context",
    "context window",
    "context size",
    "too many tokens",
    "prompt is too long",
    "input is too long",
    "exceed_context_size",
)
_CONTEXT_CODES = {"context_length_exceeded", "exceed_context_size_error", "string_above_max_length"}
_MAX_DETAIL = 300


def server_message(exc: openai.APIError) -> str:
    """The human part of a provider error: the JSON ``message`` if any, else the raw body."""
    body: Any = exc.body
    if isinstance(body, dict):
        for key in ("message", "detail", "error"):
            value = body.get(key)
            if isinstance(value, str) and value.strip():
                return _shorten(value)
            if isinstance(value, dict) and isinstance(value.get("message"), str):
                return _shorten(value["message"])
    if isinstance(body, str) and body.strip():
        # Proxies answer with HTML error pages: keep their words, not their markup.
        return _shorten(re.sub(r"<[^>]+>", " ", body) if body.lstrip().startswith("<") else body)
    return _shorten(exc.message)


def _shorten(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _MAX_DETAIL else text[:_MAX_DETAIL - 1] + "…"


def is_context_overflow(exc: openai.APIError) -> bool:
    """True if the provider says the prompt (plus ``max_tokens``) exceeds the context window."""
    status = getattr(exc, "status_code", None)
    if status == 413:  # "payload too large" from proxies in front of a model
        return True
    if exc.code in _CONTEXT_CODES:
        return True
    if status not in (None, 400, 422, 500):
        return False
    text = f"{exc.message} {server_message(exc)}".lower()
    return any(phrase in text for phrase in _CONTEXT_PHRASES)


def mentions_parameter(exc: openai.APIError, name: str) -> bool:
    """True if a 4xx rejection names the request parameter ``name`` (for compatibility retries)."""
    status = getattr(exc, "status_code", None)
    if status is None or not 400 <= status < 500 or status in (401, 403, 404, 429):
        return False
    return exc.param == name or name in f"{exc.message} {server_message(exc)}"


#: Phrases servers use when a model or server cannot take ``tools`` (lower case).
_TOOLS_REJECTED = ("does not support tools", "doesn't support tools", "tools are not supported",
                   "tool calling is not supported", "tools param requires --jinja",
                   "enable-auto-tool-choice", "does not support function calling",
                   "function calling is not supported", "tools is not supported",
                   "tool use is not supported")


def rejects_tools(exc: openai.APIError) -> bool:
    """True if a 4xx/500 rejection says the model or server cannot take tool definitions."""
    status = getattr(exc, "status_code", None)
    if status is None or status in (401, 403, 404, 429) or not 400 <= status <= 500:
        return False
    text = f"{exc.message} {server_message(exc)}".lower()
    return any(phrase in text for phrase in _TOOLS_REJECTED)


def convert_error(exc: BaseException, *, base_url: str, model: str) -> LLMError:
    """The project error for ``exc``; the caller raises it ``from exc``."""
    where = f"the server at {base_url}"
    if isinstance(exc, openai.APITimeoutError):
        return LLMTimeoutError(
            f"Model '{model}' at {base_url} did not answer in time.",
            hint="Try again, use a smaller prompt, or raise the timeout in Settings.")
    if isinstance(exc, openai.APIConnectionError):
        cause = exc.__cause__ or exc.__context__
        detail = f" ({_shorten(str(cause))})" if cause and str(cause) else ""
        return LLMConnectionError(
            f"Could not reach {base_url}{detail}.",
            hint="Is the server running? Check the base URL in Settings.")
    if isinstance(exc, openai.APIStatusError):
        return _convert_status(exc, where=where, base_url=base_url, model=model)
    if isinstance(exc, openai.APIError):
        # Errors reported inside a stream (an SSE event with an "error" object).
        if is_context_overflow(exc):
            return _context_error(exc, model)
        return LLMProviderError(f"{where} reported an error: {server_message(exc)}",
                                hint="Try again; if it persists, check the server's log.")
    return LLMProviderError(f"Talking to {where} failed: {type(exc).__name__}: {exc}",
                            hint="Check the endpoint settings and the server's log.")


def _context_error(exc: openai.APIError, model: str) -> ContextOverflowError:
    return ContextOverflowError(
        f"The conversation is too long for model '{model}': {server_message(exc)}",
        hint="Start a new conversation, shorten the input, or lower max tokens.")


def _convert_status(exc: openai.APIStatusError, *, where: str, base_url: str,
                    model: str) -> LLMError:
    status = exc.status_code
    detail = server_message(exc)
    if status in (401, 403):
        # The server's own text is kept (it explains *why*), the key is never echoed by us.
        return LLMAuthError(
            f"{where} rejected the API key ({status}: {detail}).",
            hint="Check the API key for this endpoint in Settings.")
    if status == 404 or exc.code == "model_not_found":
        return LLMModelNotFoundError(
            f"{where} does not serve model '{model}' ({status}: {detail}).",
            hint="Use 'Test connection' in Settings to list the models it serves, and check "
                 "that the base URL ends in the API root (usually '/v1').")
    if status == 429:
        error: LLMRateLimitError
        if exc.code == "insufficient_quota" or "quota" in detail.lower():
            error = LLMRateLimitError(
                f"{where} says the account is out of quota ({detail}).",
                hint="Check billing or usage limits with the provider, or pick another model.")
            error.retryable = False  # waiting does not refill a quota
            return error
        return LLMRateLimitError(f"{where} is rate limiting requests ({detail}).",
                                 hint="Wait a moment and try again.")
    if is_context_overflow(exc):
        return _context_error(exc, model)
    if status in (408, 504):  # a proxy in front of the model gave up waiting
        return LLMTimeoutError(
            f"Model '{model}' at {base_url} did not answer in time ({status}: {detail}).",
            hint="Try again, use a smaller prompt, or ask a faster model.")
    if status >= 500:
        error_5xx = LLMProviderError(f"{where} failed with a server error ({status}: {detail}).",
                                     hint="Try again; if it persists, check the server's log.")
        error_5xx.retryable = True
        return error_5xx
    return LLMProviderError(f"{where} rejected the request ({status}: {detail}).",
                            hint="Check the model settings for this endpoint.")
