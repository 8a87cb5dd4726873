"""What executing a plan produces: one ``StepRun`` per step and the ``ExecutionResult``.

Kept apart from the executor so the analyzer, the runner and the UI can read results
without importing the scheduling machinery.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from desktop_app.core.agent.events import Event
from desktop_app.core.dag.plan import Plan, PlanStep
from desktop_app.core.llm.types import Usage

StepState = Literal["pending", "running", "done", "failed", "skipped", "cancelled"]

#: Receives events; may be a plain function or a coroutine function.
EventSink = Callable[[Event], Any]


@dataclass
class StepOutput:
    """What a step runner returns for a step that finished."""

    answer: str
    model: str | None = None
    iterations: int = 0
    usage: Usage = field(default_factory=Usage)


@dataclass
class StepRun:
    """The state and outcome of one step of one round."""

    step: PlanStep
    state: StepState = "pending"
    result: str = ""
    error: str | None = None
    model: str | None = None
    started_at: float | None = None  # time.monotonic()
    finished_at: float | None = None
    iterations: int = 0
    usage: Usage = field(default_factory=Usage)

    @property
    def id(self) -> str:
        return self.step.id

    @property
    def elapsed(self) -> float:
        if self.started_at is None or self.finished_at is None:
            return 0.0
        return self.finished_at - self.started_at

    @property
    def ok(self) -> bool:
        return self.state == "done"


@dataclass
class StepContext:
    """Everything a step runner gets: the goal, the step, its dependencies' results."""

    goal: str
    step: PlanStep
    dependencies: list[StepRun]
    round: int
    model: str | None
    emit: Callable[[Event], Awaitable[None]]


#: Runs one step; raising means the step failed (the executor catches everything).
StepRunner = Callable[[PlanStep, StepContext], Awaitable[StepOutput]]


@dataclass
class ExecutionResult:
    """All step runs of one round, in plan order."""

    plan: Plan
    runs: dict[str, StepRun]
    stopped: bool = False

    @property
    def usage(self) -> Usage:
        total = Usage()
        for run in self.runs.values():
            total = total + run.usage
        return total

    @property
    def iterations(self) -> int:
        return sum(run.iterations for run in self.runs.values())

    def by_state(self, state: StepState) -> list[StepRun]:
        return [run for run in self.runs.values() if run.state == state]

    @property
    def all_done(self) -> bool:
        return all(run.ok for run in self.runs.values())

    def summary(self, *, max_chars: int = 2000) -> str:
        """A plain-text report of every step (task, state, result or error) for prompts."""
        lines: list[str] = []
        for run in self.runs.values():
            lines.append(f"### {run.id}: {run.step.task}")
            if run.ok:
                text = run.result.strip() or "(empty result)"
                if len(text) > max_chars:
                    text = text[:max_chars] + " …[truncated]"
                lines.append(f"Result: {text}")
            else:
                lines.append(f"State: {run.state}" + (f" — {run.error}" if run.error else ""))
            lines.append("")
        return "\n".join(lines).strip()
