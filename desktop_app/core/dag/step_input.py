"""The query one DAG step's agent receives: the goal, its task, its dependencies' results.

Dependency results can be long (a step that read a document, a step that listed files). If
they would take more than a share of the step model's context, they are compacted with the
``step_dependency`` hint of ``ContextGuard`` (an LLM summary that keeps exact data); if that
is unavailable or fails, each result is cut to its share instead, so a step always starts.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING

from desktop_app.core.dag.plan import PlanStep
from desktop_app.core.dag.results import StepRun
from desktop_app.core.llm.types import ChatMessage, Usage

if TYPE_CHECKING:
    from desktop_app.core.llm.base import LLM

log = logging.getLogger(__name__)

#: Share of the step model's context the dependency results may take before compaction.
DEPENDENCY_SHARE = 0.35
_MIN_BUDGET = 256


def approx_tokens(text: str) -> int:
    """A cheap token estimate (about 4 characters a token for ASCII, 1.5 otherwise)."""
    ascii_chars = sum(1 for ch in text if ord(ch) < 128)
    return int(ascii_chars / 4 + (len(text) - ascii_chars) / 1.5) + 1


def _header(goal: str, step: PlanStep) -> str:
    lines = [f"Overall goal: {goal.strip()}", "", f"Your task ({step.id}): {step.task.strip()}"]
    if step.tool_hint:
        lines.append(f"Suggested tool: {step.tool_hint}")
    return "\n".join(lines)


def _dependency_block(run: StepRun) -> str:
    return f"Result of {run.id} ({run.step.task.strip()}):\n{run.result.strip() or '(empty)'}"


def compose_query(goal: str, step: PlanStep, blocks: Sequence[str]) -> str:
    """Header plus the (possibly compacted) dependency blocks, as one user query."""
    query = _header(goal, step)
    if blocks:
        query += "\n\nResults of the steps this task depends on:\n\n" + "\n\n".join(blocks)
    return query + "\n\nDo the task now and give its complete result."


def _truncate_blocks(blocks: list[str], budget_tokens: int) -> list[str]:
    """Cut each block to an equal share of the budget (the heuristic fallback)."""
    share_chars = max(200, (budget_tokens * 4) // max(1, len(blocks)))
    return [b if len(b) <= share_chars else b[:share_chars] + " …[truncated]" for b in blocks]


async def _compact_with_guard(llm: LLM, header: str, blocks: list[str],
                              budget_tokens: int) -> tuple[list[str], Usage]:
    """Compact the dependency blocks with ContextGuard's ``step_dependency`` hint."""
    from desktop_app.core.context import ContextGuard

    messages = [ChatMessage.user(header, pinned=True)]
    messages += [ChatMessage.user(block) for block in blocks]
    # Share 1.0: a dependency result is summarised (exact values kept), not cut head/tail,
    # unless it alone exceeds the whole budget.
    guard = ContextGuard(llm, single_message_share=1.0)
    # The guard's budget covers the whole list: the (pinned) header plus the blocks' share.
    budget = budget_tokens + guard.counter.count_messages(messages[:1])
    outcome = await guard.check_and_compact(messages, budget, hint="step_dependency")
    compacted = [m.content for m in outcome.messages if not m.pinned and m.content.strip()]
    return compacted, outcome.usage


async def build_step_query(goal: str, step: PlanStep, dependencies: Sequence[StepRun], *,
                           llm: LLM | None = None,
                           budget_tokens: int | None = None) -> tuple[str, Usage]:
    """The step's query and the usage spent compacting it (zero if nothing was compacted)."""
    blocks = [_dependency_block(run) for run in dependencies]
    if budget_tokens is None:
        context = llm.context_size if llm is not None else 8192
        budget_tokens = max(_MIN_BUDGET, int(context * DEPENDENCY_SHARE))
    if not blocks or sum(approx_tokens(b) for b in blocks) <= budget_tokens:
        return compose_query(goal, step, blocks), Usage()
    if llm is not None:
        try:
            compacted, usage = await _compact_with_guard(llm, _header(goal, step), blocks,
                                                         budget_tokens)
            if compacted and sum(approx_tokens(b) for b in compacted) <= budget_tokens * 1.2:
                return compose_query(goal, step, compacted), usage
            log.info("step %s: compaction left too much; truncating instead", step.id)
        except Exception as exc:  # noqa: BLE001 - falls back to truncation
            log.warning("step %s: dependency compaction failed (%s); truncating", step.id, exc)
    return compose_query(goal, step, _truncate_blocks(blocks, budget_tokens)), Usage()
