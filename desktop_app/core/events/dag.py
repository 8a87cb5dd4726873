"""Events a DAG run adds to the SPEC §8 protocol (plan, step progress, analysis, re-plan).

They follow the §8 style: a pydantic model per event, an SSE ``channel``, a ``type`` and a
``status`` tag. A DAG run also emits the engine's own events: ``Phase`` (planning,
executing, analyzing, synthesizing), ``AnswerStart/Delta/Done`` for the streamed final
answer, ``ErrorEvent``, and always ends with ``Done``. What one step's agent emits inside
the step arrives wrapped in ``DagStepProgress`` so the UI can file it under that step.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from desktop_app.core.events.run import Event, IterationDone, IterationStart
from desktop_app.core.llm.types import Usage

StepOutcome = Literal["done", "failed", "skipped", "cancelled"]


class PlannedStep(BaseModel):
    """One step as shown in a ``DagPlan`` event."""

    model_config = ConfigDict(frozen=True)
    id: str
    task: str
    dependencies: list[str] = Field(default_factory=list)
    tool_hint: str | None = None
    model_hint: str | None = None
    model: str | None = None  # the model the step will run on, resolved from model_hint


class DagPlan(Event):
    """A plan was made (round 0) or re-made (round 1, 2...)."""

    channel: ClassVar[str] = "plan"
    type: Literal["plan"] = "plan"
    status: Literal["done"] = "done"
    round: int
    steps: list[PlannedStep]
    warnings: list[str] = Field(default_factory=list)
    fallback: bool = False


class DagStepStart(Event):
    """A step starts; ``model`` is the registry name of the model its agent runs on."""

    channel: ClassVar[str] = "dag_step"
    type: Literal["dag_step"] = "dag_step"
    status: Literal["start"] = "start"
    round: int
    step_id: str
    task: str
    model: str | None = None


class DagStepProgress(Event):
    """Something happened inside a running step: ``event``/``data`` is the inner §8 event."""

    channel: ClassVar[str] = "dag_step"
    type: Literal["dag_step"] = "dag_step"
    status: Literal["progress"] = "progress"
    round: int
    step_id: str
    event: str
    data: dict[str, Any] = Field(default_factory=dict)


class DagStepDone(Event):
    """A step ended: done, failed, skipped (with the reason) or cancelled."""

    channel: ClassVar[str] = "dag_step"
    type: Literal["dag_step"] = "dag_step"
    status: Literal["done"] = "done"
    round: int
    step_id: str
    outcome: StepOutcome
    model: str | None = None
    result: str = ""
    error: str | None = None
    elapsed: float = 0.0
    iterations: int = 0
    usage: Usage = Field(default_factory=Usage)


class DagAnalysis(Event):
    """The plan analyzer's verdict on one round."""

    channel: ClassVar[str] = "analysis"
    type: Literal["analysis"] = "analysis"
    status: Literal["done"] = "done"
    round: int
    achieved: bool
    confidence: float
    reason: str = ""
    final_answer: str = ""


class DagReplan(Event):
    """The goal was not achieved; another planning round starts."""

    channel: ClassVar[str] = "replan"
    type: Literal["replan"] = "replan"
    status: Literal["start"] = "start"
    round: int
    reason: str = ""


def step_tool_event(event: DagStepProgress) -> IterationStart | IterationDone | None:
    """The tool call inside a running step, as the same event a ReAct run emits, so the
    window shows its card (and artifacts) and the store keeps it. ``call_id`` is prefixed
    with the step id: steps run in parallel and their iterations and ids collide."""
    if event.event != IterationStart.channel or event.data.get("type") != "iteration":
        return None
    data = dict(event.data)
    data["call_id"] = f"{event.step_id}:{data.get('call_id') or data.get('iteration')}"
    kind = IterationStart if data.get("status") == "start" else IterationDone
    try:
        return kind.model_validate(data)
    except ValidationError:
        return None
