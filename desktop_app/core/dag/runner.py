"""DagRunner: one DAG-mode run from goal to ``Done`` (SPEC §7, §8).

plan → execute → analyze → (re-plan, at most ``max_replans`` times, with the earlier rounds'
results as context) → synthesise the final answer (streamed) from the step results. Every
phase is announced with a ``Phase`` event; usage is summed over planning, every step,
analysis and synthesis. ``Done`` is always the last event: after success, after an error
(preceded by an ``ErrorEvent``), after ``stop()`` and after the run's task is cancelled.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Coroutine, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from desktop_app.core.agent.events import (
    AnswerDelta,
    AnswerDone,
    AnswerStart,
    Done,
    ErrorEvent,
    Event,
    Inject,
    Notice,
    Phase,
)
from desktop_app.core.agent.interrupts import InterruptQueue
from desktop_app.core.agent.metrics import RunClock
from desktop_app.core.dag.analyzer import Analysis, PlanAnalyzer
from desktop_app.core.dag.events import DagAnalysis, DagPlan, DagReplan, PlannedStep
from desktop_app.core.dag.executor import DAGExecutor, emit_to
from desktop_app.core.dag.plan import MAX_PLAN_STEPS, Plan
from desktop_app.core.dag.planner import DAGPlanner, history_context
from desktop_app.core.dag.results import EventSink, ExecutionResult, StepRunner
from desktop_app.core.dag.synthesis import fallback_answer, stream_synthesis, synthesis_messages
from desktop_app.core.llm.types import ChatMessage, Usage

if TYPE_CHECKING:
    from desktop_app.core.llm.registry import ModelRegistry
    from desktop_app.core.tools.base import ToolRegistry

log = logging.getLogger(__name__)
#: Roles whose model plans (first match wins); without any, the run's model plans.
PLANNER_ROLES = ("planner", "reasoning")
#: Roles whose model judges the results.
ANALYZER_ROLES = ("analyzer", "reasoning", "planner")

T = TypeVar("T")


class _Stopped(Exception):
    """Internal: the user pressed stop while a model call of the runner itself was running."""


@dataclass
class DagRound:
    """One plan → execute → analyze round."""

    number: int
    plan: Plan
    execution: ExecutionResult | None = None
    analysis: Analysis | None = None


@dataclass
class DagResult:
    """Everything a DAG run produced; ``Done`` carries the same answer, usage and elapsed."""

    answer: str
    rounds: list[DagRound] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    iterations: int = 0
    elapsed: float = 0.0
    model: str | None = None
    error: str | None = None
    cancelled: bool = False


class DagRunner:
    """Drives DAG mode for one goal; ``model`` (name or role) plans, analyses and answers."""

    def __init__(self, registry: ModelRegistry, tools: ToolRegistry | None = None, *,
                 model: str | None = None, max_replans: int = 1,
                 max_steps: int = MAX_PLAN_STEPS, max_concurrency: int = 2,
                 local_model_concurrency: int = 1,
                 step_timeout: float | None = 300.0, step_max_iterations: int = 8,
                 step_runner: StepRunner | None = None,
                 planner_max_tokens: int | None = 1024, analysis_max_tokens: int | None = 768,
                 synthesis_max_tokens: int | None = 1024,
                 agent_options: dict[str, Any] | None = None,
                 instructions: str | None = None) -> None:
        """``model`` None means the default model; ``agent_options`` go to every step's
        ``ReActAgent`` (e.g. ``use_native_tools``); ``instructions`` (an assistant's own
        system prompt) shape the final answer (steps keep their own prompts)."""
        self.instructions = instructions
        self._registry = registry
        self._tools = tools
        self.model_name = registry.resolve(model)
        self.max_replans = max(0, max_replans)
        self.max_steps = max_steps
        self.planner_max_tokens = planner_max_tokens
        self.analysis_max_tokens = analysis_max_tokens
        self.synthesis_max_tokens = synthesis_max_tokens
        self._executor = DAGExecutor(registry, tools, max_concurrency=max_concurrency,
                                     local_model_concurrency=local_model_concurrency,
                                     step_timeout=step_timeout, step_runner=step_runner,
                                     max_iterations=step_max_iterations,
                                     agent_options=agent_options)
        self._stop_requested = False
        self._current: asyncio.Future[Any] | None = None
        self._streamed = ""
        #: The current run's start, first answer word and streamed calls (Done.metrics).
        self._clock = RunClock()
        self._queue: InterruptQueue | None = None
        self._interrupts: list[str] = []

    def role_model(self, *roles: str) -> str:
        """The model configured for the first of ``roles`` that has one, else the run's."""
        configured = self._registry.roles()
        return next((configured[r] for r in roles if r in configured), self.model_name)

    async def _drain(self, emit: Any) -> None:
        """Take queued user interrupts, report each with an ``inject`` event."""
        if self._queue is None:
            return
        for text in self._queue.drain():
            self._interrupts.append(text)
            await emit(Inject(content=text))

    def _interrupt_text(self) -> str:
        if not self._interrupts:
            return ""
        return ("The user added while the plan was running (treat it as part of the goal):\n"
                + "\n".join(f"- {text}" for text in self._interrupts))

    def stop(self) -> None:
        """Stop the run: pending steps are skipped, running ones and model calls cancelled."""
        self._stop_requested = True
        self._executor.stop()
        if self._current is not None and not self._current.done():
            self._current.cancel()

    async def _call(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run one model-calling phase so that ``stop()`` can cancel it."""
        if self._stop_requested:
            coro.close()
            raise _Stopped
        task = asyncio.ensure_future(coro)
        self._current = task
        try:
            return await task
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if self._stop_requested and not (current and current.cancelling()):
                raise _Stopped from None
            raise
        finally:
            self._current = None

    async def run(self, goal: str, *, history: Sequence[ChatMessage] = (),
                  interrupt_queue: InterruptQueue | None = None,
                  on_event: EventSink | None = None,
                  started: float | None = None) -> DagResult:
        """Run ``goal`` in DAG mode; never raises except for cancellation of the caller.
        ``started``: when the person asked (times count from it, as ``drive_run``'s).

        Messages the user sends meanwhile (``interrupt_queue``) are taken at phase
        boundaries: the analysis and any re-plan treat them as part of the goal, and the
        synthesis answers them at the latest (SPEC §5), so none is silently lost.
        """
        self._stop_requested = False
        self._streamed = ""
        self._queue = interrupt_queue
        self._interrupts = []
        self._executor.reset()
        self._clock = RunClock(started)
        result = DagResult(answer="", model=self.model_name)

        async def emit(event: Event) -> None:
            await emit_to(on_event, event)

        with self._clock.measuring():
            return await self._run_timed(goal, history, result, emit)

    async def _run_timed(self, goal: str, history: Sequence[ChatMessage], result: DagResult,
                         emit: Any) -> DagResult:
        try:
            await self._run(goal, history, result, emit)
        except _Stopped:
            result.cancelled = True
        except asyncio.CancelledError:
            result.cancelled = True
            await self._finish(result, emit)
            raise
        except Exception as exc:  # noqa: BLE001 - reported, never raised to the caller
            from desktop_app.core.agent.runner import logged_error_message

            result.error = logged_error_message(exc, "DAG run")
            await emit(ErrorEvent(message=result.error, kind=type(exc).__name__))
        await self._finish(result, emit)
        return result

    async def _finish(self, result: DagResult, emit: Any) -> None:
        # Like the agent's driver: Done.answer is exactly the text streamed as AnswerDelta
        # (after a stop or an error, what was streamed so far; the step results stay in
        # their dag_step events and in ``result.rounds``).
        result.answer = self._streamed
        result.iterations = sum(r.execution.iterations for r in result.rounds
                                if r.execution is not None)
        result.elapsed = time.perf_counter() - self._clock.started
        await emit(Done(answer=result.answer, iterations=result.iterations, usage=result.usage,
                        elapsed=round(result.elapsed, 3), model=result.model,
                        error=result.error, cancelled=result.cancelled,
                        metrics=self._clock.metrics()))

    async def _run(self, goal: str, history: Sequence[ChatMessage], result: DagResult,
                   emit: Any) -> None:
        planner = DAGPlanner(self._registry.get(self.role_model(*PLANNER_ROLES)),
                             models=self._registry, max_steps=self.max_steps,
                             max_tokens=self.planner_max_tokens)
        analyzer = PlanAnalyzer(self._registry.get(self.role_model(*ANALYZER_ROLES)),
                                max_tokens=self.analysis_max_tokens)
        context = history_context(history)
        for number in range(self.max_replans + 1):
            await emit(Phase(phase="planning"))
            interrupts_at_plan = len(self._interrupts)  # a later one changes the goal
            plan = await self._call(planner.plan(goal, self._tools, context))
            result.usage = result.usage + plan.usage
            current = DagRound(number=number, plan=plan)
            result.rounds.append(current)
            await emit(self._plan_event(plan, number))

            await emit(Phase(phase="executing"))
            execution = await self._executor.execute(plan, goal, on_event=emit, round=number)
            current.execution = execution
            result.usage = result.usage + execution.usage
            if execution.stopped or self._stop_requested:
                raise _Stopped

            await self._drain(emit)
            await emit(Phase(phase="analyzing"))
            previous = "\n\n".join(filter(None, [self._previous(result, number),
                                                  self._interrupt_text()]))
            outcome = await self._call(analyzer.analyze(goal, execution, previous=previous))
            current.analysis = outcome.analysis
            result.usage = result.usage + outcome.usage
            analysis = outcome.analysis
            await emit(DagAnalysis(round=number, achieved=analysis.achieved,
                                   confidence=analysis.confidence, reason=analysis.reason,
                                   final_answer=analysis.final_answer))
            if analysis.achieved or number == self.max_replans:
                break
            if execution.all_done and len(self._interrupts) == interrupts_at_plan:
                # Every step finished and the goal did not change: the analyzer cannot point
                # to a failed step, only doubt a result it cannot show to be wrong. Measured
                # on the bundled model: such re-plans repeated the same steps and the
                # analyzer looped on its own wrong claim (203 s for "12*12 and 7*8, then
                # add"). Answer from the results.
                log.info("analysis says not achieved, but every step finished; no re-plan")
                break
            await emit(DagReplan(round=number + 1, reason=analysis.reason or "goal not achieved"))
            context = "\n\n".join(filter(None, [history_context(history),
                                                self._previous(result, number + 1),
                                                self._interrupt_text()]))

        await self._drain(emit)
        await emit(Phase(phase="synthesizing"))
        executions = [r.execution for r in result.rounds if r.execution is not None]
        draft = result.rounds[-1].analysis.final_answer if result.rounds[-1].analysis else ""

        async def delta(text: str) -> None:
            self._clock.answer_text(text)
            self._streamed += text
            await emit(AnswerDelta(content=text))

        last = result.rounds[-1].analysis
        unmet = None
        if last is not None and not last.achieved:
            unmet = last.reason or "no reason given"
            await emit(Notice(message=f"The check after the plan found the goal not fully "
                                      f"reached ({unmet}); the answer says what is missing."))
        await emit(AnswerStart())
        answerer = self._registry.get(self.model_name)
        text, usage, error = await self._call(stream_synthesis(
            answerer, synthesis_messages(goal, executions, self._interrupts, unmet,
                                         self.instructions), delta,
            max_tokens=self.synthesis_max_tokens))
        result.usage = result.usage + usage
        if error is not None:
            from desktop_app.core.agent.runner import error_message

            # Visible, like a ReAct run's: an answer cut off mid-stream is not "complete".
            log.info("synthesis failed (%s); answering from the step results", error)
            await emit(ErrorEvent(message=f"Writing the final answer failed "
                                          f"({error_message(error)}); the step results follow.",
                                  kind="synthesis"))
        if not text.strip() or error is not None:
            fallback = fallback_answer(executions, draft)
            if fallback.strip() and fallback.strip() not in text:
                await delta(("\n\n" if text.strip() else "") + fallback)
        await emit(AnswerDone())
        if not self._streamed.strip():
            result.error = (f"The model '{self.model_name}' gave an empty answer and the steps "
                            "produced nothing to show. Try again, or use ReAct mode.")
            await emit(ErrorEvent(message=result.error, kind="empty_answer"))

    def _plan_event(self, plan: Plan, number: int) -> DagPlan:
        steps = [PlannedStep(id=s.id, task=s.task, dependencies=list(s.dependencies),
                             tool_hint=s.tool_hint, model_hint=s.model_hint,
                             model=self._executor.resolve_model_name(s)) for s in plan.steps]
        return DagPlan(round=number, steps=steps, warnings=plan.warnings, fallback=plan.fallback)

    @staticmethod
    def _previous(result: DagResult, before: int) -> str:
        """What the rounds before ``before`` did and why they fell short, for re-planning."""
        parts: list[str] = []
        for r in result.rounds[:before]:
            if r.execution is None:
                continue
            parts.append(f"Round {r.number + 1} results:\n{r.execution.summary(max_chars=800)}")
            if r.analysis is not None and not r.analysis.achieved:
                parts.append(f"Round {r.number + 1} fell short: {r.analysis.reason}")
        return "\n\n".join(parts)


async def run_dag(registry: ModelRegistry, goal: str, *, tools: ToolRegistry | None = None,
                  on_event: EventSink | None = None, **options: Any) -> DagResult:
    """Convenience: ``DagRunner(registry, tools, **options).run(goal, on_event=...)``."""
    return await DagRunner(registry, tools, **options).run(goal, on_event=on_event)


__all__ = ["DagResult", "DagRound", "DagRunner", "run_dag"]
