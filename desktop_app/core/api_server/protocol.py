"""The OpenAI chat-completions wire format: requests read into the app's types, answers
and errors written the way OpenAI's clients expect them."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from desktop_app.core.llm.types import ChatMessage, StreamChunk, ToolCall, Usage


class ApiError(Exception):
    """An error answered in OpenAI's format: ``{"error": {message, type, param, code}}``."""

    def __init__(self, status: int, message: str, *, kind: str = "invalid_request_error",
                 code: str | None = None, param: str | None = None,
                 headers: Mapping[str, str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.kind = kind
        self.code = code
        self.param = param
        self.headers = dict(headers or {})

    def body(self) -> dict[str, Any]:
        return {"error": {"message": self.message, "type": self.kind, "param": self.param,
                          "code": self.code}}


class ChatRequest(BaseModel):
    """The fields of ``POST /v1/chat/completions`` this server reads (others are ignored,
    as OpenAI's own server ignores what it does not know from older clients)."""

    model_config = ConfigDict(extra="ignore")

    model: str
    messages: list[dict[str, Any]] = Field(min_length=1)
    stream: bool = False
    stream_options: dict[str, Any] | None = None
    tools: list[dict[str, Any]] | None = None
    tool_choice: str | dict[str, Any] | None = None
    response_format: dict[str, Any] | None = None
    temperature: float | None = Field(default=None, ge=0, le=2)
    top_p: float | None = Field(default=None, gt=0, le=1)
    max_tokens: int | None = Field(default=None, ge=1)
    max_completion_tokens: int | None = Field(default=None, ge=1)
    stop: str | list[str] | None = None
    seed: int | None = None
    presence_penalty: float | None = Field(default=None, ge=-2, le=2)
    frequency_penalty: float | None = Field(default=None, ge=-2, le=2)
    n: int = Field(default=1, ge=1, le=1)

    @property
    def token_limit(self) -> int | None:
        return self.max_completion_tokens or self.max_tokens

    def sampling(self) -> dict[str, Any]:
        stop = [self.stop] if isinstance(self.stop, str) else self.stop
        return {"stop": stop, "seed": self.seed, "top_p": self.top_p,
                "presence_penalty": self.presence_penalty,
                "frequency_penalty": self.frequency_penalty}


def parse_chat_request(raw: bytes) -> ChatRequest:
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError):
        raise ApiError(400, "The request body is not valid JSON.") from None
    if not isinstance(data, dict):
        raise ApiError(400, "The request body must be a JSON object.")
    try:
        return ChatRequest.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first.get("loc", ()))
        raise ApiError(400, f"Invalid '{where}': {first.get('msg')}.", param=where or None,
                       code="invalid_value") from None


def _text_of(content: Any, where: str) -> str:
    """A message's content: a string, or a list of text parts (images are refused)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = []
        for part in content:
            if isinstance(part, dict) and part.get("type") == "text":
                texts.append(str(part.get("text", "")))
            else:
                kind = part.get("type") if isinstance(part, dict) else type(part).__name__
                raise ApiError(400, f"{where}: content parts of type '{kind}' are not "
                               "supported by this server (text only).", param=where)
        return "".join(texts)
    raise ApiError(400, f"{where}: content must be a string or a list of parts.", param=where)


def to_messages(raw: list[dict[str, Any]]) -> list[ChatMessage]:
    """OpenAI messages as the app's ``ChatMessage`` list."""
    out: list[ChatMessage] = []
    for index, message in enumerate(raw):
        where = f"messages.{index}"
        if not isinstance(message, dict):
            raise ApiError(400, f"{where} must be an object.", param=where)
        role = message.get("role")
        if role in ("system", "developer"):
            out.append(ChatMessage.system(_text_of(message.get("content"), where)))
        elif role == "user":
            out.append(ChatMessage.user(_text_of(message.get("content"), where)))
        elif role == "assistant":
            calls = []
            raw_calls = message.get("tool_calls") or []
            if not isinstance(raw_calls, list):
                raise ApiError(400, f"{where}.tool_calls must be a list.",
                               param=f"{where}.tool_calls")
            for number, call in enumerate(raw_calls):
                function = call.get("function") if isinstance(call, dict) else None
                if not isinstance(function, dict) or not isinstance(function.get("name"), str) \
                        or not function.get("name"):
                    raise ApiError(400, f"{where}.tool_calls.{number}: a call needs a "
                                   "function name.", param=f"{where}.tool_calls")
                arguments = function.get("arguments")
                calls.append(ToolCall(id=str(call.get("id") or f"call_{index}_{number}"),
                                      name=str(function["name"]),
                                      arguments=arguments if isinstance(arguments, str)
                                      else json.dumps(arguments or {})))
            out.append(ChatMessage.assistant(_text_of(message.get("content"), where),
                                             tool_calls=calls))
        elif role == "tool":
            out.append(ChatMessage.tool(_text_of(message.get("content"), where),
                                        tool_call_id=str(message.get("tool_call_id") or ""),
                                        name=message.get("name")))
        else:
            raise ApiError(400, f"{where}: unknown role {role!r}.", param=f"{where}.role")
    return out


def tool_choice_of(choice: str | dict[str, Any] | None) -> Any:
    if choice is None or choice in ("auto", "none", "required"):
        return choice
    if isinstance(choice, dict) and choice.get("type") == "function":
        return choice
    raise ApiError(400, "tool_choice must be 'auto', 'none', 'required' or a function.",
                   param="tool_choice")


def new_id() -> str:
    return f"chatcmpl-{uuid.uuid4().hex[:24]}"


def _calls(calls: list[ToolCall]) -> list[dict[str, Any]]:
    return [{"id": call.id, "type": "function",
             "function": {"name": call.name, "arguments": call.arguments}} for call in calls]


def _usage(usage: Usage) -> dict[str, int]:
    return {"prompt_tokens": usage.prompt_tokens, "completion_tokens": usage.completion_tokens,
            "total_tokens": usage.total_tokens}


def completion_body(request_id: str, model: str, message: ChatMessage, usage: Usage,
                    finish_reason: str | None, extra: Mapping[str, Any] | None = None
                    ) -> dict[str, Any]:
    reply: dict[str, Any] = {"role": "assistant", "content": message.content or None}
    if message.tool_calls:
        reply["tool_calls"] = _calls(message.tool_calls)
    body: dict[str, Any] = {
        "id": request_id, "object": "chat.completion", "created": int(time.time()),
        "model": model, "choices": [{"index": 0, "message": reply, "logprobs": None,
                                     "finish_reason": finish_reason_of(message, finish_reason)}],
        "usage": _usage(usage)}
    body.update(extra or {})
    return body


def finish_reason_of(message: ChatMessage, finish_reason: str | None) -> str:
    if message.tool_calls:
        return "tool_calls"
    return "length" if finish_reason == "length" else "stop"


def chunk_body(request_id: str, model: str, *, delta: dict[str, Any] | None = None,
               finish_reason: str | None = None, usage: Usage | None = None,
               extra: Mapping[str, Any] | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {"id": request_id, "object": "chat.completion.chunk",
                            "created": int(time.time()), "model": model, "choices": []}
    if delta is not None or finish_reason is not None:
        body["choices"] = [{"index": 0, "delta": delta or {}, "logprobs": None,
                            "finish_reason": finish_reason}]
    if usage is not None:
        body["usage"] = _usage(usage)
    body.update(extra or {})
    return body


def chunk_deltas(chunk: StreamChunk) -> list[dict[str, Any]]:
    """The deltas one of the app's stream chunks becomes (text, then complete calls)."""
    deltas: list[dict[str, Any]] = []
    if chunk.content:
        deltas.append({"content": chunk.content})
    if chunk.tool_calls:
        deltas.append({"tool_calls": [{"index": i, **call}
                                      for i, call in enumerate(_calls(chunk.tool_calls))]})
    return deltas


def sse(data: dict[str, Any] | str) -> bytes:
    text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
    return f"data: {text}\n\n".encode()
