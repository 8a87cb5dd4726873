"""The one interface every model adapter implements (SPEC §2)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Sequence
from typing import Any, Protocol, runtime_checkable

from desktop_app.core.llm.types import ChatMessage, LLMResult, StreamChunk

#: ``tools`` are OpenAI-style function specs: {"type": "function", "function": {...}}.
ToolSpec = dict[str, Any]
#: None, "auto", "none", "required" or {"type": "function", "function": {"name": ...}}.
ToolChoice = str | dict[str, Any] | None


class LLM(ABC):
    """A chat model: non-streaming ``chat`` for the tool loop, ``stream_chat`` for answers."""

    @property
    @abstractmethod
    def model_id(self) -> str:
        """The model's identifier (file name or provider model name)."""

    @property
    @abstractmethod
    def context_size(self) -> int:
        """Context window in tokens."""

    @property
    @abstractmethod
    def abilities(self) -> dict[str, bool]:
        """At least ``tool_call``, ``json_mode``, ``streaming``, ``vision``, ``thinking``."""

    @abstractmethod
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
        """One complete answer."""

    @abstractmethod
    def stream_chat(
        self,
        messages: Sequence[ChatMessage],
        *,
        tools: list[ToolSpec] | None = None,
        tool_choice: ToolChoice = None,
        response_format: dict[str, Any] | None = None,
        temperature: float | None = None,
        max_tokens: int | None = None,
    ) -> AsyncIterator[StreamChunk]:
        """The answer as it is produced. Cancelling the consumer stops generation."""

    @property
    def reuses_prompt_prefix(self) -> bool:
        """True when a prompt that extends the previous one costs only its new tokens (a
        local model's KV cache): the engine then shares prefixes between calls on purpose."""
        return False

    def count_tokens(self, text: str) -> int | None:
        """Exact token count if this model has a local tokenizer, else None."""
        return None

    async def aclose(self) -> None:
        """Release resources (threads, connections, model memory)."""


@runtime_checkable
class ChoosesTool(Protocol):
    """A model that can be asked cheaply which of the offered tools it would call first
    (local models: the first few tokens of its reply)."""

    async def choose_tool(self, messages: Sequence[ChatMessage],
                          tools: list[ToolSpec]) -> str | None:
        """The tool among ``tools`` the model would call for ``messages``; None: it would
        answer in text. A name that is none of theirs: it began a call of that name."""
        ...

    async def choose_among(self, messages: Sequence[ChatMessage], tools: list[ToolSpec],
                           names: Sequence[str]) -> str | None:
        """Which of ``names`` (some of ``tools``) the model calls when its first call must
        be one of them."""
        ...
