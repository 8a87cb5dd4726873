"""I/O-free parsing of OpenAI chat-completion responses into the project's types.

``StreamAccumulator`` turns ``ChatCompletionChunk`` objects into ``StreamChunk`` deltas and
one final chunk with usage, finish reason and the complete tool calls; ``parse_completion``
does the same for a non-streaming ``ChatCompletion``. Both split reasoning out of the content
(``reasoning_content`` / ``reasoning`` fields, or ``<think>`` tags) and keep tool-call
arguments exactly as the server sent them, even when they are not valid JSON.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from desktop_app.core.errors import LLMBadOutputError
from desktop_app.core.llm.think_splitter import ThinkSplitter, split_think
from desktop_app.core.llm.types import ChatMessage, LLMResult, StreamChunk, ToolCall, Usage

#: Where servers put separate reasoning: DeepSeek/llama.cpp/LM Studio use
#: ``reasoning_content``; vLLM (newer) and OpenRouter use ``reasoning``.
_REASONING_FIELDS = ("reasoning_content", "reasoning")


def reasoning_of(obj: Any) -> str:
    """The reasoning text a message or delta carries in a non-standard field, or ``""``."""
    for name in _REASONING_FIELDS:
        value = getattr(obj, name, None)
        if isinstance(value, str) and value:
            return value
    return ""


def usage_of(obj: Any) -> Usage | None:
    """The usage block of a completion or chunk, if the server sent one."""
    usage = getattr(obj, "usage", None)
    if usage is None:
        return None
    prompt = int(getattr(usage, "prompt_tokens", 0) or 0)
    completion = int(getattr(usage, "completion_tokens", 0) or 0)
    total = int(getattr(usage, "total_tokens", 0) or 0) or prompt + completion
    return Usage(prompt_tokens=prompt, completion_tokens=completion, total_tokens=total)


def _arguments_text(value: Any) -> str:
    # Some servers send arguments as a JSON object instead of a string; re-encode it so
    # ``ToolCall.arguments`` is always the raw JSON text the engine expects.
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


@dataclass
class _PartialCall:
    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)


class ToolCallAccumulator:
    """Collects streamed tool-call deltas (keyed by ``index``) into complete ``ToolCall``s."""

    def __init__(self) -> None:
        self._calls: dict[int, _PartialCall] = {}

    def add(self, deltas: Any) -> None:
        """Fold one delta's ``tool_calls`` list into the calls collected so far."""
        for delta in deltas or ():
            call = self._slot(delta)
            call_id = getattr(delta, "id", None)
            if call_id and not call.id:
                call.id = call_id
            function = getattr(delta, "function", None)
            if function is None:
                continue
            name = getattr(function, "name", None)
            # OpenAI sends the name once; llama-cpp-python repeats it in every delta.
            if name and name != call.name:
                call.name = name if not call.name else call.name + name
            piece = _arguments_text(getattr(function, "arguments", None))
            if piece:
                call.arguments.append(piece)

    def _slot(self, delta: Any) -> _PartialCall:
        index = getattr(delta, "index", None)
        if index is None:
            # Servers that omit the index: a new id starts a new call, no id continues the last.
            call_id = getattr(delta, "id", None)
            for call in self._calls.values():
                if call_id and call.id == call_id:
                    return call
            if call_id or not self._calls:
                index = len(self._calls)
            else:
                index = max(self._calls)
        return self._calls.setdefault(int(index), _PartialCall())

    def result(self) -> list[ToolCall]:
        """The complete calls in index order; missing ids are made up, arguments kept raw."""
        calls = []
        for index in sorted(self._calls):
            partial = self._calls[index]
            arguments = "".join(partial.arguments)
            calls.append(ToolCall(id=partial.id or f"call_{index}", name=partial.name,
                                  arguments=arguments if arguments.strip() else "{}"))
        return calls


class StreamAccumulator:
    """Turns a chat-completion chunk stream into ``StreamChunk`` deltas plus a final chunk."""

    def __init__(self) -> None:
        self._splitter = ThinkSplitter()
        self._tools = ToolCallAccumulator()
        self.usage: Usage | None = None
        self.finish_reason: str | None = None
        self.model: str = ""
        self.chunks_seen = 0

    def feed(self, chunk: Any) -> StreamChunk | None:
        """One server chunk in; the visible delta out (None if it carried nothing to show)."""
        self.chunks_seen += 1
        self.model = getattr(chunk, "model", None) or self.model
        self.usage = usage_of(chunk) or self.usage
        choices = getattr(chunk, "choices", None) or []
        if not choices:
            return None  # e.g. the trailing usage-only chunk
        choice = choices[0]
        self.finish_reason = getattr(choice, "finish_reason", None) or self.finish_reason
        delta = getattr(choice, "delta", None)
        if delta is None:
            return None
        reasoning = reasoning_of(delta)
        text = getattr(delta, "content", None)
        split = self._splitter.feed(text) if isinstance(text, str) else None
        self._tools.add(getattr(delta, "tool_calls", None))
        content = split.content if split else ""
        reasoning += split.reasoning if split else ""
        if not content and not reasoning:
            return None
        return StreamChunk(content=content, reasoning=reasoning)

    def finish(self) -> StreamChunk:
        """The final chunk: held-back text, usage, finish reason and complete tool calls."""
        rest = self._splitter.flush()
        tool_calls = self._tools.result()
        finish_reason = self.finish_reason or ("tool_calls" if tool_calls else "stop")
        return StreamChunk(content=rest.content, reasoning=rest.reasoning, usage=self.usage,
                           finish_reason=finish_reason, tool_calls=tool_calls)


def parse_completion(completion: Any, *, fallback_model: str) -> LLMResult:
    """A non-streaming ``ChatCompletion`` as an ``LLMResult``."""
    choices = getattr(completion, "choices", None)
    if not choices:
        raise LLMBadOutputError(
            f"Model '{fallback_model}' returned no answer (the response had no choices).",
            hint="Try again; if it persists, check the server's log.")
    choice = choices[0]
    message = getattr(choice, "message", None)
    raw_content = getattr(message, "content", None)
    content, think = split_think(raw_content) if isinstance(raw_content, str) else ("", "")
    reasoning = "\n".join(part for part in (reasoning_of(message), think) if part)
    tool_calls = []
    for index, call in enumerate(getattr(message, "tool_calls", None) or []):
        function = getattr(call, "function", None)
        arguments = _arguments_text(getattr(function, "arguments", None))
        tool_calls.append(ToolCall(id=getattr(call, "id", None) or f"call_{index}",
                                   name=getattr(function, "name", None) or "",
                                   arguments=arguments if arguments.strip() else "{}"))
    finish_reason = getattr(choice, "finish_reason", None)
    return LLMResult(
        message=ChatMessage.assistant(content, tool_calls=tool_calls,
                                      reasoning_content=reasoning or None),
        usage=usage_of(completion) or Usage(),
        finish_reason=finish_reason or ("tool_calls" if tool_calls else "stop"),
        model=getattr(completion, "model", None) or fallback_model,
    )
