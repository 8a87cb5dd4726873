"""The data the LLM layer speaks: messages, tool calls, usage, results and stream chunks."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, Field

Role = Literal["system", "user", "assistant", "tool"]

#: Keys every ``LLM.abilities`` mapping has.
ABILITY_KEYS = ("tool_call", "json_mode", "streaming", "vision", "thinking")


def make_abilities(**overrides: bool) -> dict[str, bool]:
    """An abilities mapping with every key present (False unless overridden)."""
    unknown = set(overrides) - set(ABILITY_KEYS)
    if unknown:
        raise ValueError(f"unknown abilities: {sorted(unknown)}")
    abilities = {key: False for key in ABILITY_KEYS}
    abilities.update(overrides)
    return abilities


class ToolCall(BaseModel):
    """One function call requested by the model.

    ``arguments`` is the raw JSON text as the provider sent it: it may be malformed, and the
    engine, not the adapter, decides what to do about that.
    """

    id: str
    name: str
    arguments: str = "{}"

    def parsed_arguments(self) -> Any:
        """The decoded arguments; raises ``ValueError`` if they are not valid JSON."""
        return json.loads(self.arguments) if self.arguments.strip() else {}

    def to_provider(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "type": "function",
            "function": {"name": self.name, "arguments": self.arguments},
        }


class ChatMessage(BaseModel):
    """One message of a conversation.

    ``pinned`` marks messages compaction must keep (the user's query, user interrupts); it
    and ``reasoning_content`` are never sent to a provider.
    """

    role: Role
    content: str = ""
    tool_calls: list[ToolCall] = Field(default_factory=list)
    tool_call_id: str | None = None
    name: str | None = None
    reasoning_content: str | None = None
    pinned: bool = False

    @classmethod
    def system(cls, content: str) -> ChatMessage:
        return cls(role="system", content=content)

    @classmethod
    def user(cls, content: str, *, pinned: bool = False) -> ChatMessage:
        return cls(role="user", content=content, pinned=pinned)

    @classmethod
    def assistant(cls, content: str = "", *, tool_calls: list[ToolCall] | None = None,
                  reasoning_content: str | None = None) -> ChatMessage:
        return cls(role="assistant", content=content, tool_calls=tool_calls or [],
                   reasoning_content=reasoning_content)

    @classmethod
    def tool(cls, content: str, *, tool_call_id: str, name: str | None = None) -> ChatMessage:
        return cls(role="tool", content=content, tool_call_id=tool_call_id, name=name)

    def to_provider(self) -> dict[str, Any]:
        """The OpenAI chat-completions wire form (no ``pinned``, no reasoning)."""
        out: dict[str, Any] = {"role": self.role, "content": self.content}
        if self.tool_calls:
            out["tool_calls"] = [call.to_provider() for call in self.tool_calls]
        if self.tool_call_id is not None:
            out["tool_call_id"] = self.tool_call_id
        if self.name is not None and self.role == "tool":
            out["name"] = self.name
        return out


class Usage(BaseModel):
    """Token counts of one call, or summed over a run."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            completion_tokens=self.completion_tokens + other.completion_tokens,
            total_tokens=self.total_tokens + other.total_tokens,
        )

    @classmethod
    def of(cls, prompt_tokens: int, completion_tokens: int) -> Usage:
        return cls(prompt_tokens=prompt_tokens, completion_tokens=completion_tokens,
                   total_tokens=prompt_tokens + completion_tokens)


class RunMetrics(BaseModel):
    """How fast a run answered (measured in ``core/agent/metrics.py``); None where nothing
    was measured."""

    #: Seconds from the start of the run to the first visible answer text.
    ttft: float | None = None
    #: Prompt tokens per second of reading (streamed calls; includes network latency).
    prompt_tps: float | None = None
    #: Output tokens per second of writing (streamed calls, after their first chunk).
    output_tps: float | None = None


class LLMResult(BaseModel):
    """The answer of one non-streaming ``chat()`` call."""

    message: ChatMessage
    usage: Usage = Field(default_factory=Usage)
    finish_reason: str | None = None
    model: str = ""


@dataclass(slots=True)
class StreamChunk:
    """One piece of a streamed answer.

    ``content`` and ``reasoning`` are deltas. The final chunk carries ``usage`` and
    ``finish_reason``; complete ``tool_calls`` (if any) arrive with it too.
    """

    content: str = ""
    reasoning: str = ""
    usage: Usage | None = None
    finish_reason: str | None = None
    tool_calls: list[ToolCall] = field(default_factory=list)
    #: On the final chunk, when the backend measured it: seconds from the request to the
    #: first generated token. A tool call is held back until it is complete, so the first
    #: chunk's arrival would make the model's writing look ten times faster than it is.
    first_token_s: float | None = None
