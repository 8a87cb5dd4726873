"""The interface the engine expects from a context guard (implemented in ``core/context``).

Declared as Protocols so the agent does not import the context package (which imports the
agent's events) and tests can pass a tiny fake.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from desktop_app.core.llm.base import LLM
from desktop_app.core.llm.types import ChatMessage, Usage


class CompactionResultLike(Protocol):
    """What one ``check_and_compact`` call returns."""

    @property
    def messages(self) -> list[ChatMessage]: ...
    @property
    def compacted(self) -> bool: ...
    @property
    def original_count(self) -> int: ...
    @property
    def kept_count(self) -> int: ...
    @property
    def usage(self) -> Usage: ...


@runtime_checkable
class ContextGuardLike(Protocol):
    """Keeps a message list inside a token budget (SPEC §6)."""

    async def check_and_compact(self, messages: list[ChatMessage], budget: int,
                                hint: str = "react_iteration", *,
                                force: bool = False) -> CompactionResultLike: ...

    def budget_for(self, llm: LLM) -> int: ...
