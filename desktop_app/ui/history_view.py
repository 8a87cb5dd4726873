"""Rebuilding a stored conversation's widgets from the store's records.

Each exchange becomes a *builder* (a function returning widgets) so the chat view can build
only the most recent ones when a long conversation opens. Interrupts are shown inside the
answer of the run they were sent into, as they were live, not as separate user bubbles.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtWidgets import QWidget

from desktop_app.core.llm.types import Usage
from desktop_app.core.store.records import ConversationDetail, Message
from desktop_app.core.store.run_recorder import PLAN_EVENTS
from desktop_app.ui.message_widgets import AssistantTurn, UserMessage, format_footer

Builder = Callable[[], list[QWidget]]


def stored_footer(message: Message) -> str:
    usage = Usage.of(message.prompt_tokens or 0, message.completion_tokens or 0)
    timings = message.timings
    iterations = timings.iterations if timings.iterations is not None else max(
        1, len({step.iteration for step in message.steps}))  # saved before iterations were
    text = format_footer(model=message.model, iterations=iterations,
                         usage=usage, elapsed=timings.elapsed or 0.0,
                         cancelled=message.status == "interrupted", ttft=timings.ttft,
                         prompt_tps=timings.prompt_tokens_per_second,
                         output_tps=timings.tokens_per_second, cut=timings.cut)
    return text


def _replay_plan(turn: AssistantTurn, plan: list[dict[str, Any]]) -> None:
    """The plan card and check lines of a DAG answer, from its stored events."""
    from desktop_app.core.events import dag
    from desktop_app.ui.run_render import apply_event

    for item in plan:
        kind = getattr(dag, str(item.get("kind")), None)
        if kind not in PLAN_EVENTS:
            continue
        try:
            event = kind.model_validate(item.get("data") or {})
        except ValueError:  # written by another version: skipped, the answer stays
            continue
        apply_event(turn, event)


def build_turn(message: Message, interrupts: list[str]) -> AssistantTurn:
    """A finished assistant turn: its tool cards, interrupts, answer, error and footer."""
    turn = AssistantTurn()
    turn.message_id = message.id
    # As the live run showed it: the plan card, the steps' tool cards, then the checks.
    checks = {"DagAnalysis", "DagReplan"}
    _replay_plan(turn, [item for item in message.plan if item.get("kind") not in checks])
    for step in message.steps:
        card = turn.add_card(step.tool, step.args, step.iteration)
        card.finish(step.observation, step.error, step.elapsed or 0.0)
    _replay_plan(turn, [item for item in message.plan if item.get("kind") in checks])
    for text in interrupts:
        turn.add_interrupt(text).mark_delivered()
    if message.error:
        turn.add_error(message.error)
    turn.finish(stored_footer(message), message.content)
    if message.status == "interrupted" and not message.content.strip():
        turn.answer.set_markdown("*(stopped before any text was written)*")
    return turn


def builders_for(detail: ConversationDetail,
                 on_user: Callable[[UserMessage], None],
                 on_turn: Callable[[AssistantTurn], None],
                 skip_message: int | None = None) -> list[Builder]:
    """One builder per exchange. ``skip_message``: an assistant message still streaming
    (the live run renders it instead)."""
    interrupt_ids = {i.message_id for i in detail.interrupts}
    by_run: dict[int, list[str]] = {}
    for interrupt in detail.interrupts:
        if interrupt.run_message_id is not None:
            by_run.setdefault(interrupt.run_message_id, []).append(interrupt.content)

    builders: list[Builder] = []
    last_user: int | None = None
    for message in detail.messages:
        if message.role == "user" and message.id not in interrupt_ids:
            last_user = message.id

            def build_user(m: Message = message) -> list[QWidget]:
                widget = UserMessage(m.content, m.id)
                on_user(widget)
                return [widget]

            builders.append(build_user)
        elif message.role == "assistant" and message.id != skip_message:
            if not message.content.strip() and not message.steps and not message.error \
                    and message.status == "complete":
                continue  # an intermediate tool-call message, not a turn of its own

            def build_assistant(m: Message = message, u: int | None = last_user) -> list[QWidget]:
                turn = build_turn(m, by_run.get(u, []) if u is not None else [])
                turn.user_message_id = u
                on_turn(turn)
                return [turn]

            builders.append(build_assistant)
    return builders
