"""The DAG event types, defined in ``desktop_app.core.events.dag`` (see
``desktop_app.core.agent.events``); re-exported here."""

from __future__ import annotations

from desktop_app.core.events.dag import (
    DagAnalysis,
    DagPlan,
    DagReplan,
    DagStepDone,
    DagStepProgress,
    DagStepStart,
    PlannedStep,
    StepOutcome,
    step_tool_event,
)

__all__ = [
    "DagAnalysis",
    "DagPlan",
    "DagReplan",
    "DagStepDone",
    "DagStepProgress",
    "DagStepStart",
    "PlannedStep",
    "StepOutcome",
    "step_tool_event",
]
