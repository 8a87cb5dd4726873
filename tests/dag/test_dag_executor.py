"""DAGExecutor scheduling with an injected step runner: concurrency, order, cascade, timeout, stop."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from desktop_app.core.agent.events import Event, Phase
from desktop_app.core.dag.events import DagStepDone, DagStepProgress, DagStepStart
from desktop_app.core.dag.executor import DAGExecutor
from desktop_app.core.dag.plan import Plan, PlanStep, validate_plan
from desktop_app.core.dag.results import StepContext, StepOutput
from desktop_app.core.llm.types import Usage


def make_plan(*specs: tuple[str, list[str]]) -> Plan:
    return validate_plan({"steps": [{"id": i, "task": f"task {i}", "dependencies": d}
                                    for i, d in specs]})


class Recorder:
    """A step runner that sleeps per step and records start/end times and inputs."""

    def __init__(self, delays: dict[str, float] | None = None, fail: set[str] | None = None,
                 default_delay: float = 0.0) -> None:
        self.delays = delays or {}
        self.fail = fail or set()
        self.default_delay = default_delay
        self.times: dict[str, tuple[float, float]] = {}
        self.started: list[str] = []
        self.cancelled: list[str] = []
        self.inputs: dict[str, list[tuple[str, str]]] = {}
        self.active = 0
        self.max_active = 0

    async def __call__(self, step: PlanStep, ctx: StepContext) -> StepOutput:
        start = time.monotonic()
        self.started.append(step.id)
        self.inputs[step.id] = [(d.id, d.result) for d in ctx.dependencies]
        self.active += 1
        self.max_active = max(self.max_active, self.active)
        try:
            await ctx.emit(Phase(phase=f"working on {step.id}"))
            await asyncio.sleep(self.delays.get(step.id, self.default_delay))
            if step.id in self.fail:
                raise RuntimeError(f"{step.id} broke")
            return StepOutput(answer=f"result of {step.id}", iterations=1, usage=Usage.of(10, 5))
        except asyncio.CancelledError:
            self.cancelled.append(step.id)
            raise
        finally:
            self.active -= 1
            self.times[step.id] = (start, time.monotonic())


def run(executor: DAGExecutor, plan: Plan, events: list[Event] | None = None) -> Any:
    return asyncio.run(executor.execute(plan, "the goal",
                                        on_event=events.append if events is not None else None))


def test_two_independent_slow_steps_overlap_in_time() -> None:
    rec = Recorder(default_delay=0.3)
    began = time.monotonic()
    result = run(DAGExecutor(step_runner=rec, max_concurrency=2), make_plan(("a", []), ("b", [])))
    total = time.monotonic() - began
    (a_start, a_end), (b_start, b_end) = rec.times["a"], rec.times["b"]
    assert a_start < b_end and b_start < a_end  # the intervals intersect
    assert total < 0.55, f"two 0.3 s steps took {total:.2f} s: they ran one after the other"
    assert result.all_done and result.usage.total_tokens == 30


def test_concurrency_is_bounded() -> None:
    rec = Recorder(default_delay=0.05)
    run(DAGExecutor(step_runner=rec, max_concurrency=2),
        make_plan(*((f"s{i}", []) for i in range(5))))
    assert rec.max_active == 2
    rec1 = Recorder(default_delay=0.05)
    run(DAGExecutor(step_runner=rec1, max_concurrency=1), make_plan(("a", []), ("b", [])))
    assert rec1.max_active == 1
    assert rec1.times["a"][1] <= rec1.times["b"][0]


def test_ready_steps_start_in_natural_order() -> None:
    rec = Recorder()
    run(DAGExecutor(step_runner=rec, max_concurrency=1),
        make_plan(("step_10", []), ("step_2", []), ("step_1", [])))
    assert rec.started == ["step_1", "step_2", "step_10"]


def test_dependency_runs_after_and_receives_the_result() -> None:
    rec = Recorder(delays={"step_1": 0.1})
    result = run(DAGExecutor(step_runner=rec, max_concurrency=4),
                 make_plan(("step_1", []), ("step_2", ["step_1"])))
    assert rec.times["step_1"][1] <= rec.times["step_2"][0]
    assert rec.inputs["step_2"] == [("step_1", "result of step_1")]
    assert result.runs["step_2"].result == "result of step_2"


def test_failure_cascades_to_dependants_with_the_reason() -> None:
    rec = Recorder(fail={"s1"})
    events: list[Event] = []
    result = run(DAGExecutor(step_runner=rec), make_plan(
        ("s1", []), ("s2", ["s1"]), ("s3", ["s2"]), ("s4", [])), events)
    assert result.runs["s1"].state == "failed" and result.runs["s1"].error == "s1 broke"
    for dependant in ("s2", "s3"):
        assert result.runs[dependant].state == "skipped"
        assert result.runs[dependant].error == "skipped because s1 failed: s1 broke"
    assert result.runs["s4"].state == "done"
    assert "s2" not in rec.started and "s3" not in rec.started
    skipped = [e for e in events if isinstance(e, DagStepDone) and e.outcome == "skipped"]
    assert [e.step_id for e in skipped] == ["s2", "s3"]


def test_step_timeout_fails_the_step_and_skips_dependants() -> None:
    rec = Recorder(delays={"slow": 5.0})
    began = time.monotonic()
    result = run(DAGExecutor(step_runner=rec, step_timeout=0.2),
                 make_plan(("slow", []), ("after", ["slow"]), ("other", [])))
    assert time.monotonic() - began < 2.0
    assert result.runs["slow"].state == "failed"
    assert result.runs["slow"].error == "timed out after 0.2 s"
    assert result.runs["after"].state == "skipped"
    assert result.runs["other"].state == "done"


def test_stop_cancels_running_and_skips_pending() -> None:
    rec = Recorder(delays={"s1": 5.0, "s2": 5.0})
    executor = DAGExecutor(step_runner=rec, max_concurrency=2)
    events: list[Event] = []

    async def scenario() -> Any:
        task = asyncio.create_task(executor.execute(
            make_plan(("s1", []), ("s2", []), ("s3", []), ("s4", ["s1"])), "goal",
            on_event=events.append))
        await asyncio.sleep(0.1)
        executor.stop()
        return await asyncio.wait_for(task, 2.0)

    began = time.monotonic()
    result = asyncio.run(scenario())
    assert time.monotonic() - began < 1.5
    assert result.stopped
    assert sorted(rec.cancelled) == ["s1", "s2"]
    assert {r.id: r.state for r in result.runs.values()} == {
        "s1": "cancelled", "s2": "cancelled", "s3": "skipped", "s4": "skipped"}
    assert result.runs["s3"].error == "skipped: the run was stopped"
    done_ids = [e.step_id for e in events if isinstance(e, DagStepDone)]
    assert sorted(done_ids) == ["s1", "s2", "s3", "s4"]


def test_cancelling_execute_cancels_steps_and_reraises() -> None:
    rec = Recorder(delays={"s1": 5.0})
    events: list[Event] = []

    async def scenario() -> None:
        task = asyncio.create_task(DAGExecutor(step_runner=rec).execute(
            make_plan(("s1", []), ("s2", ["s1"])), "goal", on_event=events.append))
        await asyncio.sleep(0.1)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(scenario())
    assert rec.cancelled == ["s1"]
    outcomes = {e.step_id: e.outcome for e in events if isinstance(e, DagStepDone)}
    assert outcomes == {"s1": "cancelled", "s2": "skipped"}


def test_events_wrap_step_progress_and_report_the_model() -> None:
    rec = Recorder()
    events: list[Event] = []
    run(DAGExecutor(step_runner=rec), make_plan(("s1", [])), events)
    assert [type(e) for e in events] == [DagStepStart, DagStepProgress, DagStepDone]
    progress = events[1]
    assert isinstance(progress, DagStepProgress)
    assert progress.step_id == "s1" and progress.event == "phase"
    assert progress.data["phase"] == "working on s1"
    done = events[2]
    assert isinstance(done, DagStepDone)
    assert done.outcome == "done" and done.result == "result of s1" and done.elapsed >= 0


def test_async_event_sink_and_failing_sink_do_not_break_the_run() -> None:
    seen: list[str] = []

    async def sink(event: Event) -> None:
        seen.append(type(event).__name__)
        raise RuntimeError("ui bug")

    result = asyncio.run(DAGExecutor(step_runner=Recorder()).execute(
        make_plan(("s1", [])), "goal", on_event=sink))
    assert result.all_done
    assert seen == ["DagStepStart", "DagStepProgress", "DagStepDone"]


def test_stop_before_execute_runs_nothing_and_is_consumed() -> None:
    rec = Recorder()
    executor = DAGExecutor(step_runner=rec)
    executor.stop()
    first = run(executor, make_plan(("s1", [])))
    assert first.stopped and first.runs["s1"].state == "skipped" and rec.started == []
    assert run(executor, make_plan(("s1", []))).all_done


def test_a_step_that_finished_when_stop_came_keeps_its_result() -> None:
    rec = Recorder(delays={"fast": 0.0, "slow": 0.1})
    executor = DAGExecutor(step_runner=rec, max_concurrency=2)

    async def sink(event: Event) -> None:
        # The UI is slow to take "fast done"; meanwhile "slow" finishes and stop is pressed.
        if isinstance(event, DagStepDone) and event.step_id == "fast":
            executor.stop()
            await asyncio.sleep(0.3)

    result = asyncio.run(executor.execute(
        make_plan(("fast", []), ("slow", []), ("later", ["fast"])), "goal", on_event=sink))
    assert result.stopped
    assert result.runs["slow"].state == "done" and result.runs["slow"].result == "result of slow"
    assert result.runs["later"].state == "skipped"


def test_one_step_at_a_time_on_a_local_model_while_others_run_alongside(tmp_path: Any) -> None:
    from desktop_app.core.llm.llama_cpp_adapter import LlamaCppLLM
    from desktop_app.core.llm.registry import ModelEntry, ModelRegistry
    from desktop_app.core.llm.testing import ScriptedLLM

    registry = ModelRegistry()
    registry.add(ModelEntry(name="remote", kind="endpoint", factory=ScriptedLLM,
                            abilities={}, context_size=8192), default=True)
    registry.add(ModelEntry(name="gguf", kind="local", factory=ScriptedLLM, abilities={},
                            context_size=4096, roles=["fast"]))
    # a llama.cpp model registered as an instance counts as local too (never loaded here)
    registry.register("bundled", LlamaCppLLM(tmp_path / "never-loaded.gguf", name="b"))
    active: dict[str | None, int] = {}
    peak: dict[str | None, int] = {}
    order: list[str] = []

    async def runner(step: PlanStep, ctx: StepContext) -> StepOutput:
        order.append(step.id)
        active[ctx.model] = active.get(ctx.model, 0) + 1
        peak[ctx.model] = max(peak.get(ctx.model, 0), active[ctx.model])
        await asyncio.sleep(0.05)
        active[ctx.model] -= 1
        return StepOutput(answer="ok")

    plan = validate_plan({"steps": [
        {"id": "step_1", "task": "a", "model_hint": "fast"},
        {"id": "step_2", "task": "b", "model_hint": "fast"},
        {"id": "step_3", "task": "c"}, {"id": "step_4", "task": "d"},
        {"id": "step_5", "task": "e", "model_hint": "bundled"},
        {"id": "step_6", "task": "f", "model_hint": "bundled"}]})
    executor = DAGExecutor(registry, step_runner=runner, max_concurrency=4)
    assert [executor.model_slots(m) for m in ("gguf", "bundled", "remote")] == [1, 1, 4]
    result = asyncio.run(executor.execute(plan, "goal"))
    assert result.all_done
    assert peak == {"gguf": 1, "bundled": 1, "remote": 2}
    # step_2 waits for the local model; the remote steps and step_5 take the free slots
    assert order[:4] == ["step_1", "step_3", "step_4", "step_5"]
