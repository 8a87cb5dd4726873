"""The endpoints: ``GET /v1/models``, ``POST /v1/chat/completions`` (streaming or not,
tools, JSON output), ``POST /v1/embeddings`` and ``GET /health``."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, TypeVar

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from desktop_app.core.api_server.agent_model import agent_completion
from desktop_app.core.api_server.pool import AGENT_MODEL, ModelPool
from desktop_app.core.api_server.protocol import (
    ApiError,
    ChatRequest,
    chunk_body,
    chunk_deltas,
    completion_body,
    new_id,
    parse_chat_request,
    sse,
    to_messages,
    tool_choice_of,
)
from desktop_app.core.errors import ContextOverflowError, DesktopAppError, LLMError
from desktop_app.core.llm.base import LLM
from desktop_app.core.llm.types import ChatMessage, Usage

ToolsFactory = Callable[[], Any]
T = TypeVar("T")


def error_response(error: ApiError) -> JSONResponse:
    return JSONResponse(error.body(), status_code=error.status, headers=error.headers)


def build_app(pool: ModelPool, *, tools: ToolsFactory | None = None) -> Starlette:
    """The routes over ``pool`` (the ASGI app inside ``middleware.Guard``)."""

    async def models(_request: Request) -> Response:
        now = int(time.time())
        return JSONResponse({"object": "list", "data": [
            {"id": name, "object": "model", "created": now, "owned_by": "desktop-app"}
            for name in pool.served()]})

    async def chat(request: Request) -> Response:
        try:
            parsed = parse_chat_request(await request.body())
            name = pool.resolve(parsed.model)
            if name == AGENT_MODEL:
                if tools is None:
                    raise ApiError(404, "The agent is not offered by this server.",
                                   code="model_not_found", param="model")
                return await agent_completion(pool, parsed, tools())
            return await _chat(pool, name, parsed, request)
        except ApiError as error:
            return error_response(error)

    async def embeddings(request: Request) -> Response:
        try:
            return await _embeddings(await request.body())
        except ApiError as error:
            return error_response(error)

    async def health(_request: Request) -> Response:
        return JSONResponse({"status": "ok", "serving": pool.in_flight})

    async def not_found(request: Request, _exc: Exception) -> Response:
        return error_response(ApiError(404, f"There is no endpoint {request.url.path}.",
                                       code="not_found"))

    async def failed(_request: Request, exc: Exception) -> Response:
        # Never a traceback to a client: what failed, in the OpenAI format.
        message = str(exc) if isinstance(exc, DesktopAppError) else type(exc).__name__
        return error_response(ApiError(500, f"The server failed: {message}",
                                       kind="server_error"))

    return Starlette(routes=[
        Route("/v1/models", models, methods=["GET"]),
        Route("/v1/chat/completions", chat, methods=["POST"]),
        Route("/v1/embeddings", embeddings, methods=["POST"]),
        Route("/health", health, methods=["GET"]),
    ], exception_handlers={404: not_found, 405: not_found, Exception: failed})


def _call_options(llm: LLM, parsed: ChatRequest) -> dict[str, Any]:
    choice = tool_choice_of(parsed.tool_choice)
    if isinstance(choice, dict):
        wanted = (choice.get("function") or {}).get("name")
        offered = {(t.get("function") or {}).get("name") for t in parsed.tools or []
                   if isinstance(t, dict)}
        if wanted not in offered:
            raise ApiError(400, f"tool_choice names '{wanted}', which is not among the tools.",
                           param="tool_choice")
    options: dict[str, Any] = {
        "tools": parsed.tools or None, "tool_choice": choice,
        "temperature": parsed.temperature, "max_tokens": parsed.token_limit}
    sampling = {k: v for k, v in parsed.sampling().items() if v is not None}
    if parsed.response_format and parsed.response_format.get("type") != "text":
        from desktop_app.core.llm.llama_replies import local_response_format

        kind = parsed.response_format.get("type")
        if kind not in ("json_object", "json_schema"):
            raise ApiError(400, f"response_format type '{kind}' is not supported.",
                           param="response_format")
        _check_schema(parsed.response_format)
        sampling["response_format"] = local_response_format(parsed.response_format)
        options["response_format"] = parsed.response_format
    if _takes_sampling(llm):
        options["sampling"] = sampling
    return options


#: A JSON schema becomes a grammar before generation: a huge one holds the model for
#: minutes (an enum of 200,000 values: 6 minutes for 8 tokens).
MAX_SCHEMA_CHARS = 32_000
MAX_ENUM = 500


def _check_schema(response_format: dict[str, Any]) -> None:
    schema = (response_format.get("json_schema") or {}).get("schema") \
        if response_format.get("type") == "json_schema" else response_format.get("schema")
    if schema is None:
        return
    if len(json.dumps(schema)) > MAX_SCHEMA_CHARS:
        raise ApiError(400, f"The JSON schema is over {MAX_SCHEMA_CHARS:,} characters.",
                       param="response_format")

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            ref = node.get("$ref")
            if ref is not None and not (isinstance(ref, str) and ref.startswith("#/")):
                raise ApiError(400, "Only local references ('#/...') are allowed in the "
                               "JSON schema.", param="response_format")
            enum = node.get("enum")
            if isinstance(enum, list) and len(enum) > MAX_ENUM:
                raise ApiError(400, f"An enum in the JSON schema has over {MAX_ENUM} values.",
                               param="response_format")
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(schema)


def _takes_sampling(llm: LLM) -> bool:
    return _accepts_sampling(type(llm))


@functools.cache
def _accepts_sampling(kind: type[LLM]) -> bool:
    import inspect

    return "sampling" in inspect.signature(kind.stream_chat).parameters


def _model_error(exc: LLMError) -> ApiError:
    if isinstance(exc, ContextOverflowError):
        return _too_long(str(exc))
    return ApiError(500, str(exc), kind="server_error")


def _too_long(message: str) -> ApiError:
    return ApiError(400, message, code="context_length_exceeded", param="messages")


async def _check_fits(llm: LLM, messages: list[ChatMessage], options: dict[str, Any]) -> None:
    """400 before anything is generated (and before a stream's 200 is sent) when the prompt
    and the answer's room exceed the model's context."""
    from desktop_app.core.context.tokens import TokenCounter, count_tools

    room = options.get("max_tokens") or 1
    # A token is at least one character: a prompt with fewer characters than the room left
    # fits for sure, and costs no tokenizer call before the first token.
    characters = sum(len(m.content) + 16 + sum(len(c.arguments) + len(c.name)
                                               for c in m.tool_calls) for m in messages)
    characters += len(json.dumps(options.get("tools") or []))
    if characters + room + 64 < llm.context_size:
        return

    def count() -> int:
        counter = TokenCounter(llm)
        return counter.count_messages(messages) + count_tools(options.get("tools"), counter)

    prompt = await asyncio.to_thread(count)
    if prompt + room > llm.context_size:
        raise _too_long(f"The messages are about {prompt:,} tokens"
                        + (f" and max_tokens asks {room:,} more" if room > 1 else "")
                        + f"; this model's context holds {llm.context_size:,}.")


async def until_disconnected(request: Request, work: Awaitable[T]) -> T:
    """``work``'s result, or cancelled as soon as the client has gone (a non-streaming
    request left behind would keep the model busy to the end of its answer)."""
    task = asyncio.ensure_future(work)
    while True:
        done, _ = await asyncio.wait({task}, timeout=0.25)
        if done:
            return task.result()
        if await request.is_disconnected():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
            raise ApiError(499, "The client closed the connection.", code="client_gone")


async def _chat(pool: ModelPool, name: str, parsed: ChatRequest,
                request: Request) -> Response:
    messages = to_messages(parsed.messages)
    llm = await pool.ready(name)
    options = _call_options(llm, parsed)
    await _check_fits(llm, messages, options)
    queue = pool.queue(name)
    request_id = new_id()
    if not parsed.stream:
        async with pool.serving(), queue.turn():
            try:
                result = await until_disconnected(request, llm.chat(messages, **options))
            except LLMError as exc:
                raise _model_error(exc) from None
        return JSONResponse(completion_body(request_id, name, result.message, result.usage,
                                            result.finish_reason))
    queue.check_room()  # said now, while a status code can still say it
    include_usage = bool((parsed.stream_options or {}).get("include_usage", True))
    return StreamingResponse(
        _stream(pool, name, llm, messages, options, request_id, include_usage),
        media_type="text/event-stream", headers={"Cache-Control": "no-store"})


async def _stream(pool: ModelPool, name: str, llm: LLM, messages: list[ChatMessage],
                  options: dict[str, Any], request_id: str,
                  include_usage: bool) -> AsyncIterator[bytes]:
    """SSE chunks; a client that disconnects cancels this generator, and closing the
    model's stream stops generation before its next token."""
    async with pool.serving(), pool.queue(name).turn():
        yield sse(chunk_body(request_id, name, delta={"role": "assistant", "content": ""}))
        usage = Usage()
        finish: str | None = None
        calls = False
        stream = llm.stream_chat(messages, **options)
        try:
            async with contextlib.aclosing(stream):  # type: ignore[type-var]
                async for piece in stream:
                    for delta in chunk_deltas(piece):
                        calls = calls or "tool_calls" in delta
                        yield sse(chunk_body(request_id, name, delta=delta))
                    usage = piece.usage or usage
                    finish = piece.finish_reason or finish
        except LLMError as exc:
            error = _model_error(exc)
            yield sse({"error": error.body()["error"]})
            return
        reason = "tool_calls" if calls else ("length" if finish == "length" else "stop")
        yield sse(chunk_body(request_id, name, finish_reason=reason))
        if include_usage:
            yield sse(chunk_body(request_id, name, usage=usage))
        yield sse("[DONE]")


#: Characters one embeddings request may carry (the model reads 256 tokens of each input;
#: more only costs time that a client leaving cannot take back).
MAX_EMBED_CHARS = 1_000_000
_embedding_turn = asyncio.Semaphore(1)


async def _embeddings(raw: bytes) -> Response:
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError):
        raise ApiError(400, "The request body is not valid JSON.") from None
    if not isinstance(data, dict) or "input" not in data:
        raise ApiError(400, "'input' is required: a string or a list of strings.",
                       param="input")
    texts = data["input"]
    if isinstance(texts, str):
        texts = [texts]
    if not isinstance(texts, list) or not texts or not all(isinstance(t, str) for t in texts):
        raise ApiError(400, "'input' must be a string or a non-empty list of strings "
                       "(token arrays are not supported).", param="input")
    if len(texts) > 2048 or sum(len(t) for t in texts) > MAX_EMBED_CHARS:
        raise ApiError(400, f"At most 2,048 inputs and {MAX_EMBED_CHARS:,} characters per "
                       "request.", param="input")
    from desktop_app.core.documents.embedder import MODEL_ID, shared_embedder

    model = str(data.get("model") or MODEL_ID)
    try:
        embedder = await asyncio.to_thread(shared_embedder)
    except RuntimeError as exc:
        raise ApiError(503, str(exc), kind="server_error") from None
    if _embedding_turn.locked():
        raise ApiError(429, "Another embeddings request is being answered; try again shortly.",
                       kind="rate_limit_error", code="queue_full", headers={"Retry-After": "1"})
    async with _embedding_turn:
        vectors = await asyncio.to_thread(embedder.embed, texts)
    tokens = sum(await asyncio.to_thread(lambda: [embedder.count_tokens(t) for t in texts]))
    return JSONResponse({"object": "list", "model": model, "data": [
        {"object": "embedding", "index": i, "embedding": [float(x) for x in vector]}
        for i, vector in enumerate(vectors)],
        "usage": {"prompt_tokens": tokens, "total_tokens": tokens}})

