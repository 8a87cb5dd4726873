"""Fake models for fast, deterministic tests: no network, no weights.

``ScriptedLLM`` answers from a queue of replies and records every request. ``FunctionLLM``
computes each answer from the request. Both stream replies in small chunks, like a real model.
"""

from __future__ import annotations

import asyncio
import json
from collections import deque
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from desktop_app.core.errors import LLMBadOutputError
from desktop_app.core.llm.base import LLM, ToolChoice, ToolSpec
from desktop_app.core.llm.types import (
    ChatMessage,
    LLMResult,
    StreamChunk,
    ToolCall,
    Usage,
    make_abilities,
)

#: What a scripted reply may be: text, a full message, a full result, an exception to raise,
#: or a callable computing one of those from the request.
Reply = str | ChatMessage | LLMResult | BaseException | Callable[["Request"], Any]


@dataclass
class Request:
    """One call a fake model received."""

    kind: Literal["chat", "stream"]
    messages: list[ChatMessage]
    tools: list[ToolSpec] | None = None
    tool_choice: ToolChoice = None
    response_format: dict[str, Any] | None = None
    temperature: float | None = None
    max_tokens: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def last_user_text(self) -> str:
        for message in reversed(self.messages):
            if message.role == "user":
                return message.content
        return ""

    @property
    def system_text(self) -> str:
        return self.messages[0].content if self.messages and self.messages[0].role == "system" else ""


def tool_call_reply(*calls: tuple[str, dict[str, Any] | str], content: str = "") -> ChatMessage:
    """An assistant message requesting native tool calls: ``tool_call_reply(("calc", {...}))``."""
    tool_calls = [
        ToolCall(id=f"call_{i}", name=name, arguments=args if isinstance(args, str) else json.dumps(args))
        for i, (name, args) in enumerate(calls)
    ]
    return ChatMessage.assistant(content, tool_calls=tool_calls)


def json_action(tool: str, args: dict[str, Any], reasoning: str = "") -> str:
    """A JSON-mode tool-call action as a model would write it."""
    return json.dumps({"type": "tool_call", "tool": tool, "args": args, "reasoning": reasoning})


def json_final(answer: str, reasoning: str = "") -> str:
    """A JSON-mode final answer as a model would write it."""
    return json.dumps({"type": "final_answer", "answer": answer, "reasoning": reasoning})


def _estimate_tokens(text: str) -> int:
    return max(1, len(text) // 4) if text else 0


class _FakeBase(LLM):
    def __init__(
        self,
        *,
        model_id: str = "fake-model",
        context_size: int = 8192,
        tool_call: bool = False,
        json_mode: bool = False,
        thinking: bool = False,
        chunk_size: int = 4,
        delay: float = 0.0,
    ) -> None:
        self._model_id = model_id
        self._context_size = context_size
        self._abilities = make_abilities(tool_call=tool_call, json_mode=json_mode,
                                         streaming=True, thinking=thinking)
        self.chunk_size = chunk_size
        self.delay = delay
        self.requests: list[Request] = []

    @property
    def model_id(self) -> str:
        return self._model_id

    @property
    def context_size(self) -> int:
        return self._context_size

    @property
    def abilities(self) -> dict[str, bool]:
        return self._abilities

    def _next_reply(self, request: Request) -> Reply:
        raise NotImplementedError

    def _resolve(self, request: Request) -> LLMResult:
        reply: Any = self._next_reply(request)
        if callable(reply) and not isinstance(reply, BaseException):
            reply = reply(request)
        if isinstance(reply, BaseException):
            raise reply
        if isinstance(reply, LLMResult):
            return reply
        message = reply if isinstance(reply, ChatMessage) else ChatMessage.assistant(str(reply))
        prompt = sum(_estimate_tokens(m.content) + 4 for m in request.messages)
        completion = _estimate_tokens(message.content) + sum(
            _estimate_tokens(c.arguments) for c in message.tool_calls)
        return LLMResult(message=message, usage=Usage.of(prompt, completion),
                         finish_reason="tool_calls" if message.tool_calls else "stop",
                         model=self._model_id)

    async def chat(self, messages: Sequence[ChatMessage], *, tools: list[ToolSpec] | None = None,
                   tool_choice: ToolChoice = None, response_format: dict[str, Any] | None = None,
                   temperature: float | None = None, max_tokens: int | None = None) -> LLMResult:
        request = Request("chat", [m.model_copy(deep=True) for m in messages], tools, tool_choice,
                          response_format, temperature, max_tokens)
        self.requests.append(request)
        if self.delay:
            await asyncio.sleep(self.delay)
        return self._resolve(request)

    async def stream_chat(self, messages: Sequence[ChatMessage], *,
                          tools: list[ToolSpec] | None = None, tool_choice: ToolChoice = None,
                          response_format: dict[str, Any] | None = None,
                          temperature: float | None = None,
                          max_tokens: int | None = None) -> AsyncIterator[StreamChunk]:
        request = Request("stream", [m.model_copy(deep=True) for m in messages], tools,
                          tool_choice, response_format, temperature, max_tokens)
        self.requests.append(request)
        result = self._resolve(request)
        text = result.message.content
        for start in range(0, len(text), self.chunk_size):
            if self.delay:
                await asyncio.sleep(self.delay)
            else:
                await asyncio.sleep(0)
            request.extra["delivered"] = start + self.chunk_size  # characters handed out
            yield StreamChunk(content=text[start:start + self.chunk_size])
        yield StreamChunk(usage=result.usage, finish_reason=result.finish_reason,
                          tool_calls=list(result.message.tool_calls))

    def calls(self, kind: Literal["chat", "stream"] | None = None) -> list[Request]:
        """The recorded requests, optionally only of one kind."""
        return [r for r in self.requests if kind is None or r.kind == kind]


class ScriptedLLM(_FakeBase):
    """Answers from a queue of replies, in order; records every request in ``requests``.

    When the queue runs dry it raises ``LLMBadOutputError`` (or repeats ``default`` if given),
    so a test that makes more calls than it scripted fails loudly.
    """

    def __init__(self, replies: Iterable[Reply] = (), *, default: Reply | None = None,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.replies: deque[Reply] = deque(replies)
        self.default = default

    def add(self, *replies: Reply) -> None:
        self.replies.extend(replies)

    def _next_reply(self, request: Request) -> Reply:
        if self.replies:
            return self.replies.popleft()
        if self.default is not None:
            return self.default
        raise LLMBadOutputError(
            f"ScriptedLLM has no reply left for request #{len(self.requests)}",
            hint="Script more replies in the test.")


class FunctionLLM(_FakeBase):
    """Computes every reply with ``fn(request)``."""

    def __init__(self, fn: Callable[[Request], Reply], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.fn = fn

    def _next_reply(self, request: Request) -> Reply:
        return self.fn(request)
