"""Turning a run's events into updates of one :class:`AssistantTurn`.

The engine's event modules are imported on the first event, not when the window opens:
importing them loads the whole engine, which the start-up time budget cannot afford.

One function, :func:`apply_event`, used live (events as they arrive) and to catch up a
freshly built turn (replaying the events of a run that is still going when the user comes
back to its conversation).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from desktop_app.ui.message_widgets import AssistantTurn, format_footer

if TYPE_CHECKING:
    from desktop_app.core.agent.events import Event

_PHASES = {
    "selecting_tools": "Choosing tools",
    "planning": "Planning",
    "executing": "Running the plan",
    "analyzing": "Checking the results",
    "synthesizing": "Writing the answer",
}


def apply_event(turn: AssistantTurn, event: Event,
                on_artifact: Callable[[str, str, str], None] | None = None) -> None:
    """Show ``event`` in ``turn``; artifacts of finished tool calls go to ``on_artifact``."""
    from desktop_app.core.agent.events import (
        AnswerDelta,
        AnswerDone,
        AnswerSignal,
        AnswerStart,
        Compact,
        Confirm,
        Done,
        ErrorEvent,
        Inject,
        IterationDone,
        IterationStart,
        Notice,
        Phase,
        ThinkingDone,
        ThinkingStart,
    )
    from desktop_app.core.dag.events import (
        DagAnalysis,
        DagPlan,
        DagReplan,
        DagStepDone,
        DagStepProgress,
        DagStepStart,
        step_tool_event,
    )
    from desktop_app.ui.plan_card import PlanCard

    if isinstance(event, DagStepProgress):
        inner = step_tool_event(event)  # a step's tool call: a card, like a ReAct one
        if inner is None:
            return
        # The card names its step: steps run side by side and may call the same tool.
        event = inner.model_copy(update={"tool_name": f"{event.step_id} · {inner.tool_name}"})
    if isinstance(event, ThinkingStart):
        turn.start_thinking(event.iteration)
    elif isinstance(event, ThinkingDone):
        if event.reasoning:
            turn.thinking.setToolTip(event.reasoning)
    elif isinstance(event, IterationStart):
        turn.add_card(event.tool_name, event.tool_args, event.iteration, event.call_id)
    elif isinstance(event, IterationDone):
        card = turn.find_card(event.tool_name, event.iteration, event.call_id)
        if card is None:  # a done without a start (should not happen): still show it
            card = turn.add_card(event.tool_name, None, event.iteration, event.call_id)
        card.finish(event.observation, event.error, event.iter_elapsed)
        turn.thinking.start("Thinking")
        if on_artifact is not None:
            for artifact in event.artifacts:
                on_artifact(artifact.name, artifact.mime_type, artifact.content)
    elif isinstance(event, AnswerSignal):
        turn.thinking.start("Writing the answer")
    elif isinstance(event, AnswerStart):
        turn.begin_answer()
    elif isinstance(event, AnswerDelta):
        turn.append_answer(event.content)
    elif isinstance(event, AnswerDone):
        turn.end_answer()
    elif isinstance(event, Compact):
        if event.question_tokens:
            turn.add_error(f"Your message is too long for this model's context window: only "
                           f"the first {event.question_kept_tokens:,} of its "
                           f"{event.question_tokens:,} tokens were used. Pick a model with a "
                           f"larger context, or shorten the message.")
        if event.original_messages != event.kept_messages:
            turn.add_divider(f"Context summarised: {event.original_messages} → "
                             f"{event.kept_messages} messages")
    elif isinstance(event, Phase):
        turn.thinking.start(_PHASES.get(event.phase, event.phase.replace("_", " ").capitalize()))
    elif isinstance(event, Inject):
        turn.mark_interrupt_delivered(event.content)
    elif isinstance(event, ErrorEvent):
        turn.add_error(event.message)
    elif isinstance(event, Notice):
        turn.add_divider(event.message)
    elif isinstance(event, Confirm):
        turn.thinking.start(f"Waiting for your permission to run {event.tool_name}")
    elif isinstance(event, DagPlan):
        plan = PlanCard(event, turn)
        turn.plans.append(plan)
        turn.insert_widget(plan)
    elif isinstance(event, DagStepStart):
        for plan in reversed(turn.plans):
            if isinstance(plan, PlanCard) and plan.round == event.round:
                plan.step_started(event)
                break
    elif isinstance(event, DagStepDone):
        for plan in reversed(turn.plans):
            if isinstance(plan, PlanCard) and plan.round == event.round:
                plan.step_done(event)
                break
    elif isinstance(event, DagAnalysis):
        verdict = "goal reached" if event.achieved else "goal not reached yet"
        turn.add_divider(f"Check: {verdict} ({event.confidence:.0%})")
    elif isinstance(event, DagReplan):
        turn.add_divider(f"Re-planning: {event.reason}" if event.reason else "Re-planning")
    elif isinstance(event, Done):
        for note in turn.interrupts:
            if not note.delivered and not event.cancelled:
                note.mark_delivered()
        metrics = event.metrics
        turn.finish(format_footer(model=event.model, iterations=event.iterations,
                                  usage=event.usage, elapsed=event.elapsed,
                                  cancelled=event.cancelled,
                                  ttft=metrics.ttft if metrics else None,
                                  prompt_tps=metrics.prompt_tps if metrics else None,
                                  output_tps=metrics.output_tps if metrics else None,
                                  cut=event.cut),
                    event.answer)
