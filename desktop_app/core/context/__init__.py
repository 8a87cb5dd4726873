"""Context management (SPEC §6): token counting, the ContextGuard and history compaction.

The engine calls ``ContextGuard.check_and_compact`` at the top of every tool-loop iteration
and :func:`compact_history` when a long conversation is loaded into a new turn; in both cases
it emits :func:`compact_event` of the result when ``result.compacted`` is true.
"""

from __future__ import annotations

from desktop_app.core.context.compaction import heuristic_summary, summarise
from desktop_app.core.context.guard import (
    CompactionResult,
    ContextGuard,
    default_output_reserve,
)
from desktop_app.core.context.prompts import HINT_PROMPTS, SUMMARY_NAME, Hint, is_summary
from desktop_app.core.context.tokens import TokenCounter, count_tools, estimate_tokens
from desktop_app.core.context.truncation import CUT_MARKER, truncate_message, truncate_text
from desktop_app.core.events.run import Compact
from desktop_app.core.llm.base import LLM
from desktop_app.core.llm.types import ChatMessage


async def compact_history(
    messages: list[ChatMessage],
    llm: LLM | None,
    budget: int,
    *,
    counter: TokenCounter | None = None,
    hint: str = "general",
    force: bool = False,
) -> CompactionResult:
    """A loaded conversation made to fit ``budget`` before a new turn (hint ``general``).

    Same rules and invariants as :meth:`ContextGuard.check_and_compact`; ``llm`` writes the
    summary (None: heuristic only).
    """
    guard = ContextGuard(llm, counter=counter)
    return await guard.check_and_compact(messages, budget, hint, force=force)


def compact_event(result: CompactionResult) -> Compact:
    """The ``compact`` event (SPEC §8) reporting ``result``'s message counts."""
    return Compact(original_messages=result.original_count, kept_messages=result.kept_count)


__all__ = [
    "CUT_MARKER",
    "HINT_PROMPTS",
    "SUMMARY_NAME",
    "CompactionResult",
    "ContextGuard",
    "Hint",
    "TokenCounter",
    "compact_event",
    "compact_history",
    "count_tools",
    "default_output_reserve",
    "estimate_tokens",
    "heuristic_summary",
    "is_summary",
    "summarise",
    "truncate_message",
    "truncate_text",
]
