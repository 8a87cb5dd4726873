"""DAGExecutor: runs a validated plan, ready steps in parallel (SPEC §7).

Scheduling is an explicit loop rather than "one task per step waiting on a semaphore", so
the order in which ready steps start is deterministic: natural id order (``step_2`` before
``step_10``), never more than ``max_concurrency`` at once, and never more than
``local_model_concurrency`` (default 1) on one local llama.cpp model: such a model runs
every call on its one worker thread, so two steps on it gain nothing from overlapping,
would evict each other's KV cache, and a waiting step would spend its timeout in the
queue. Steps on other models still run alongside. Each step runs under its own
timeout; a failed step skips everything that depends on it (with the reason); ``stop()``
or cancelling ``execute()`` skips pending steps and cancels running ones.

By default each step runs on a fresh ``ReActAgent`` built by ``_resolve_agent`` just before
the step starts, on the model its ``model_hint`` names (a model name or a role) or the
default model. Tests and other front-ends may inject any ``step_runner`` instead.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import time
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from desktop_app.core.agent import ReActAgent, partial_result
from desktop_app.core.agent.events import Event
from desktop_app.core.agent.result import StepRecord
from desktop_app.core.dag.events import DagStepDone, DagStepProgress, DagStepStart
from desktop_app.core.dag.plan import Plan, PlanStep, natural_key
from desktop_app.core.dag.results import (
    EventSink,
    ExecutionResult,
    StepContext,
    StepOutput,
    StepRun,
    StepRunner,
)
from desktop_app.core.dag.step_input import build_step_query
from desktop_app.core.errors import UnknownModelError
from desktop_app.core.llm.llama_cpp_adapter import LlamaCppLLM
from desktop_app.core.llm.types import Usage
from desktop_app.core.tools.base import Change, ToolRegistry

if TYPE_CHECKING:
    from desktop_app.core.llm.registry import ModelRegistry

log = logging.getLogger(__name__)


class StepFailedError(Exception):
    """A step's agent failed; carries the usage it spent before failing."""

    def __init__(self, message: str, *, usage: Usage) -> None:
        super().__init__(message)
        self.usage = usage


STEP_SYSTEM_PROMPT = (
    "You are one worker in a larger plan. Do only the task you are given, using the "
    "results of earlier steps where they help. Use a tool when the task needs one. "
    "Finish with a complete, self-contained result for your task: later steps and the "
    "final answer are built from it."
)


async def deny_unconfirmed(tool_name: str, args: dict[str, Any],
                           change: Change | None) -> bool:
    """The confirmer when none was given: refuse every tool that changes something."""
    log.info("DAG step: %s needs confirmation and no confirmer was given; denied", tool_name)
    return False


async def emit_to(sink: EventSink | None, event: Event) -> None:
    """Deliver ``event`` to a sync or async sink; a failing sink never breaks the run."""
    if sink is None:
        return
    try:
        outcome = sink(event)
        if inspect.isawaitable(outcome):
            await outcome
    except Exception:  # the UI's problem must not become the engine's
        log.exception("event sink failed on %s", type(event).__name__)


class DAGExecutor:
    """Runs the steps of a ``Plan`` with bounded concurrency, timeouts and cascading skips."""

    def __init__(self, registry: ModelRegistry | None = None, tools: ToolRegistry | None = None,
                 *, max_concurrency: int = 2, local_model_concurrency: int = 1,
                 step_timeout: float | None = 300.0,
                 step_runner: StepRunner | None = None, max_iterations: int = 8,
                 system_prompt: str = STEP_SYSTEM_PROMPT, agent_options: dict[str, Any] | None = None,
                 ) -> None:
        if max_concurrency < 1:
            raise ValueError("max_concurrency must be at least 1")
        if step_runner is None and registry is None:
            raise ValueError("DAGExecutor needs a ModelRegistry unless a step_runner is given")
        self._registry = registry
        self._tools = tools
        self.max_concurrency = max_concurrency
        self.local_model_concurrency = max(1, local_model_concurrency)
        self.step_timeout = step_timeout
        self._runner: StepRunner = step_runner or self._run_agent_step
        self.max_iterations = max_iterations
        self.system_prompt = system_prompt
        self.agent_options = dict(agent_options or {})
        self._stop = asyncio.Event()

    # --- control ---------------------------------------------------------------------------
    def stop(self) -> None:
        """Skip every pending step and cancel the running ones (safe to call any time)."""
        self._stop.set()

    def reset(self) -> None:
        """Forget an earlier ``stop()`` so the executor can run again."""
        self._stop.clear()

    @property
    def stopped(self) -> bool:
        return self._stop.is_set()

    # --- model choice ----------------------------------------------------------------------
    def resolve_model_name(self, step: PlanStep) -> str | None:
        """The registry name for ``step.model_hint`` (a name or a role), else the default."""
        if self._registry is None:
            return step.model_hint
        if step.model_hint:
            try:
                return self._registry.resolve(step.model_hint)
            except UnknownModelError:
                log.warning("step %s: unknown model_hint %r, using the default model",
                            step.id, step.model_hint)
        return self._registry.default_name

    def _resolve_agent(self, step: PlanStep) -> ReActAgent:
        """A fresh agent for ``step``, bound to the model its hint selects (SPEC §7).

        Built just before the step runs, so a step never shares an agent (or its message
        history) with another, and a model is only loaded when a step needs it.
        """
        assert self._registry is not None
        llm = self._registry.get(self.resolve_model_name(step) or self._registry.default_name)
        tools = self._tools if self._tools is not None else ToolRegistry()
        options = dict(self.agent_options)
        # Tools that change things need a yes from the user; with nobody to ask, the answer
        # is no (the model sees the refusal), never a silent yes.
        options.setdefault("confirm", deny_unconfirmed)
        options.setdefault("system_prompt", self.system_prompt)
        options.setdefault("max_iterations", self.max_iterations)
        # Built like every other run (window, ask, Compare, eval): the same defaults for the
        # step's model (a context guard, the tool timeout, a local model's policy).
        from desktop_app.core.agent.factory import make_agent

        return make_agent(llm, tools, **options)

    async def _run_agent_step(self, step: PlanStep, ctx: StepContext) -> StepOutput:
        """The default step runner: a fresh ReActAgent on the step's model."""
        assert self._registry is not None
        agent = self._resolve_agent(step)
        query, usage = await build_step_query(ctx.goal, step, ctx.dependencies,
                                              llm=self._registry.get(ctx.model or
                                                                     self._registry.default_name))
        try:
            result = await agent.run(query, on_event=ctx.emit)
        except Exception as exc:
            # Keep what the failed step spent, so the run's usage stays a true sum.
            partial = partial_result(exc)
            raise StepFailedError(str(exc) or type(exc).__name__,
                                  usage=usage + (partial.usage if partial else Usage())) from exc
        answer = result.answer.strip()
        if result.stop_reason == "max_iterations":
            # "I stopped after 8 iterations…" alone would lose what the tools found; the
            # analyzer and the synthesis need the data, so it goes along, labelled.
            answer += "\n\n" + step_tool_results(result.steps)
        elif not answer and any(s.error is None for s in result.steps):
            # The step's model called its tools and then wrote nothing (the bundled model,
            # "Compute 12*12 and 7*8": both results in hand, an empty answer, and the check
            # called the step failed): its result is what its tools returned.
            answer = step_tool_results(result.steps)
        return StepOutput(answer=answer, model=ctx.model, iterations=result.iterations,
                          usage=usage + result.usage)

    # --- running ---------------------------------------------------------------------------
    async def execute(self, plan: Plan, goal: str, *, on_event: EventSink | None = None,
                      round: int = 0) -> ExecutionResult:
        """Run ``plan`` for ``goal``; never raises for a failing step (see ``StepRun.state``).

        A ``stop()`` that came before this call stops it at once (no step starts); the stop
        is consumed when ``execute`` returns.
        """
        runs = {step.id: StepRun(step=step) for step in plan.steps}
        running: dict[asyncio.Task[StepOutput], StepRun] = {}
        stop_waiter: asyncio.Future[Any] = asyncio.ensure_future(self._stop.wait())

        async def finish(run: StepRun, state: str, *, error: str | None = None) -> None:
            run.state = state  # type: ignore[assignment]
            run.error = error
            run.finished_at = time.monotonic()
            await emit_to(on_event, DagStepDone(
                round=round, step_id=run.id, outcome=state, model=run.model,  # type: ignore[arg-type]
                result=run.result, error=error, elapsed=round_(run.elapsed),
                iterations=run.iterations, usage=run.usage))

        async def skip_dependants(failed: StepRun) -> None:
            for dep_id in plan.dependants(failed.id):
                dependant = runs[dep_id]
                if dependant.state == "pending":
                    reason = f"skipped because {failed.id} {failed.state}"
                    if failed.error:
                        reason += f": {failed.error}"
                    await finish(dependant, "skipped", error=reason)

        async def shutdown(reason: str) -> None:
            # A step that finished in the same instant as the stop keeps its result.
            finished_already = {task for task in running if task.done()}
            for task in running:
                task.cancel()
            await asyncio.gather(*running, return_exceptions=True)
            for task, run in sorted(running.items(), key=lambda item: natural_key(item[1].id)):
                if task in finished_already:
                    await self._settle(task, run, finish)
                else:
                    await finish(run, "cancelled", error=reason)
            running.clear()
            for run in runs.values():
                if run.state == "pending":
                    await finish(run, "skipped", error=f"skipped: {reason}")

        try:
            while True:
                if self._stop.is_set():
                    await shutdown("the run was stopped")
                    return ExecutionResult(plan=plan, runs=runs, stopped=True)
                for run in self._ready(runs, running.values()):
                    task = await self._start(run, goal, runs, round, on_event)
                    running[task] = run
                if not running:
                    break
                waiting: list[asyncio.Future[Any]] = [*running, stop_waiter]
                done, _ = await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
                # Settle finished steps in natural order so events are deterministic.
                finished = sorted((t for t in running if t in done),
                                  key=lambda t: natural_key(running[t].id))
                for task in finished:
                    run = running.pop(task)
                    await self._settle(task, run, finish)
                    if run.state != "done":
                        await skip_dependants(run)
        except asyncio.CancelledError:
            await shutdown("the run was cancelled")
            raise
        finally:
            stop_waiter.cancel()
            self._stop.clear()
        return ExecutionResult(plan=plan, runs=runs, stopped=False)

    def model_slots(self, model: str | None) -> int:
        """How many steps may run at once on ``model`` (see the module docstring)."""
        if self._registry is None or model is None or model not in self._registry:
            return self.max_concurrency
        entry = self._registry.entry(model)
        local = entry.kind in ("bundled", "local") or (
            entry.kind == "custom" and isinstance(self._registry.get(model), LlamaCppLLM))
        return self.local_model_concurrency if local else self.max_concurrency

    def _ready(self, runs: dict[str, StepRun], running: Iterable[StepRun]) -> list[StepRun]:
        """Pending steps whose dependencies are done and that have a free slot (overall and
        on their model), in natural order."""
        busy: dict[str | None, int] = {}
        for run in running:
            busy[run.model] = busy.get(run.model, 0) + 1
        room = self.max_concurrency - sum(busy.values())
        chosen: list[StepRun] = []
        candidates = sorted((run for run in runs.values() if run.state == "pending"
                             and all(runs[d].state == "done" for d in run.step.dependencies)),
                            key=lambda r: natural_key(r.id))
        for run in candidates:
            if room <= 0:
                break
            model = self.resolve_model_name(run.step)
            if busy.get(model, 0) >= self.model_slots(model):
                continue
            busy[model] = busy.get(model, 0) + 1
            room -= 1
            chosen.append(run)
        return chosen

    async def _start(self, run: StepRun, goal: str, runs: dict[str, StepRun], round_no: int,
                     on_event: EventSink | None) -> asyncio.Task[StepOutput]:
        run.state = "running"
        run.model = self.resolve_model_name(run.step)
        run.started_at = time.monotonic()
        await emit_to(on_event, DagStepStart(round=round_no, step_id=run.id, task=run.step.task,
                                             model=run.model))

        async def progress(event: Event) -> None:
            await emit_to(on_event, DagStepProgress(round=round_no, step_id=run.id,
                                                    event=event.channel, data=event.payload()))

        ctx = StepContext(goal=goal, step=run.step,
                          dependencies=[runs[d] for d in run.step.dependencies],
                          round=round_no, model=run.model, emit=progress)

        async def guarded() -> StepOutput:
            if self.step_timeout is None:
                return await self._runner(run.step, ctx)
            async with asyncio.timeout(self.step_timeout):
                return await self._runner(run.step, ctx)

        return asyncio.create_task(guarded(), name=f"dag-step-{run.id}")

    async def _settle(self, task: asyncio.Task[StepOutput], run: StepRun, finish: Any) -> None:
        exc = task.exception() if not task.cancelled() else asyncio.CancelledError()
        if exc is None:
            output = task.result()
            run.result = output.answer
            run.model = output.model or run.model
            run.iterations = output.iterations
            run.usage = output.usage
            await finish(run, "done")
        elif isinstance(exc, TimeoutError):
            await finish(run, "failed", error=f"timed out after {self.step_timeout:g} s")
        elif isinstance(exc, asyncio.CancelledError):
            await finish(run, "cancelled", error="the step was cancelled")
        else:
            log.info("step %s failed: %r", run.id, exc)
            spent = getattr(exc, "usage", None)
            if isinstance(spent, Usage):
                run.usage = spent
            await finish(run, "failed", error=str(exc) or type(exc).__name__)


def round_(value: float) -> float:
    """Elapsed seconds for events: milliseconds are plenty."""
    return round(value, 3)


#: Characters of tool results a step that hit its iteration limit passes on.
STEP_RESULTS_LIMIT = 4_000


def step_tool_results(steps: list[StepRecord], limit: int = STEP_RESULTS_LIMIT) -> str:
    """What each successful tool call of a step returned, newest last, within ``limit``."""
    lines = ["What the tools returned:"]
    for step in steps:
        if step.error is None and step.observation.strip():
            lines.append(f"- {step.tool}: {' '.join(step.observation.split())}")
    text = "\n".join(lines) if len(lines) > 1 else "No tool returned a result."
    return text if len(text) <= limit else "…" + text[-limit:]
