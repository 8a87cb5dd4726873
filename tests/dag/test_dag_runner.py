"""DagRunner: the whole plan → execute → analyze → re-plan → synthesis pipeline and its events."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from desktop_app.core.agent.events import (
    AnswerDelta,
    AnswerDone,
    AnswerStart,
    Done,
    ErrorEvent,
    Event,
    Notice,
    Phase,
    encode_sse,
)
from desktop_app.core.dag.events import (
    DagAnalysis,
    DagPlan,
    DagReplan,
    DagStepDone,
    DagStepProgress,
    DagStepStart,
)
from desktop_app.core.dag.plan import PlanStep
from desktop_app.core.dag.results import StepContext, StepOutput
from desktop_app.core.dag.runner import DagRunner
from desktop_app.core.errors import LLMConnectionError
from desktop_app.core.llm.registry import ModelRegistry
from desktop_app.core.llm.testing import ScriptedLLM
from desktop_app.core.llm.types import ChatMessage, LLMResult, Usage


def reply(text: str, prompt: int = 100, completion: int = 10) -> LLMResult:
    return LLMResult(message=ChatMessage.assistant(text), usage=Usage.of(prompt, completion))


PLAN = json.dumps({"steps": [
    {"id": "step_1", "task": "get a", "model_hint": "fast"},
    {"id": "step_2", "task": "get b"},
    {"id": "step_3", "task": "combine", "dependencies": ["step_1", "step_2"]}]})
ACHIEVED = '{"achieved": true, "confidence": 0.9, "reason": "ok", "final_answer": "a+b"}'
NOT_ACHIEVED = '{"achieved": "false", "confidence": "0.2", "reason": "b is missing"}'


class Steps:
    """Injected step runner: answers 'result of <id>' and spends 10+5 tokens per step."""

    def __init__(self, delay: float = 0.0) -> None:
        self.delay = delay
        self.seen: list[tuple[str, str | None]] = []

    async def __call__(self, step: PlanStep, ctx: StepContext) -> StepOutput:
        self.seen.append((step.id, ctx.model))
        await asyncio.sleep(self.delay)
        return StepOutput(answer=f"result of {step.id}", iterations=2, usage=Usage.of(10, 5))


def make_registry(main: ScriptedLLM) -> ModelRegistry:
    registry = ModelRegistry()
    registry.register("big", main, roles=["general"], default=True)
    registry.register("small", ScriptedLLM(model_id="small"), roles=["fast"])
    return registry


def run(runner: DagRunner, goal: str = "the goal") -> tuple[Any, list[Event]]:
    events: list[Event] = []
    result = asyncio.run(runner.run(goal, on_event=events.append))
    return result, events


def test_full_event_sequence_and_summed_usage() -> None:
    main = ScriptedLLM([reply(PLAN), reply(ACHIEVED), reply("The answer is **a+b**.")])
    steps = Steps()
    result, events = run(DagRunner(make_registry(main), step_runner=steps))
    kinds = [type(e).__name__ if not isinstance(e, Phase) else f"Phase:{e.phase}"
             for e in events if not isinstance(e, AnswerDelta)]
    assert kinds == [
        "Phase:planning", "DagPlan", "Phase:executing",
        "DagStepStart", "DagStepStart", "DagStepDone", "DagStepDone",
        "DagStepStart", "DagStepDone",
        "Phase:analyzing", "DagAnalysis", "Phase:synthesizing",
        "AnswerStart", "AnswerDone", "Done"]
    plan_event = events[1]
    assert isinstance(plan_event, DagPlan)
    assert [(s.id, s.model) for s in plan_event.steps] == [
        ("step_1", "small"), ("step_2", "big"), ("step_3", "big")]
    starts = [e for e in events if isinstance(e, DagStepStart)]
    assert [(e.step_id, e.model) for e in starts] == [
        ("step_1", "small"), ("step_2", "big"), ("step_3", "big")]
    deltas = "".join(e.content for e in events if isinstance(e, AnswerDelta))
    done = events[-1]
    assert isinstance(done, Done)
    assert done.answer == deltas == result.answer == "The answer is **a+b**."
    # 3 model calls of 110 tokens each + 3 steps of 15 tokens each
    assert done.usage == Usage(prompt_tokens=330, completion_tokens=45, total_tokens=375)
    assert done.iterations == 6 and done.model == "big" and not done.cancelled
    assert done.error is None
    # the synthesis call saw every step's result and the goal
    synth = main.calls("stream")[0]
    assert "result of step_3" in synth.last_user_text and "the goal" in synth.last_user_text
    assert all(encode_sse(e).startswith("event: ") for e in events)


class FailingSteps(Steps):
    """Like ``Steps``, but step_2 fails every time (so step_3 is skipped)."""

    async def __call__(self, step: PlanStep, ctx: StepContext) -> StepOutput:
        if step.id == "step_2":
            raise RuntimeError("b could not be fetched")
        return await super().__call__(step, ctx)


def test_replan_is_bounded_and_gets_earlier_results_as_context() -> None:
    main = ScriptedLLM([reply(PLAN), reply(NOT_ACHIEVED), reply(PLAN), reply(NOT_ACHIEVED),
                        reply(PLAN), reply(NOT_ACHIEVED), reply("best effort")])
    result, events = run(DagRunner(make_registry(main), step_runner=FailingSteps(),
                                   max_replans=2))
    assert [e.round for e in events if isinstance(e, DagPlan)] == [0, 1, 2]
    assert [e.round for e in events if isinstance(e, DagReplan)] == [1, 2]
    analyses = [e for e in events if isinstance(e, DagAnalysis)]
    assert len(analyses) == 3 and not any(a.achieved for a in analyses)
    assert analyses[0].confidence == 0.2
    assert result.answer == "best effort" and len(result.rounds) == 3
    replan_prompt = main.calls("chat")[2].last_user_text
    assert "Round 1 results" in replan_prompt and "result of step_1" in replan_prompt
    assert "b is missing" in replan_prompt
    assert isinstance(events[-1], Done)
    assert main.replies == type(main.replies)()  # every scripted reply used, none more


def test_no_replan_when_every_step_finished_and_only_the_analyzer_doubts() -> None:
    main = ScriptedLLM([reply(PLAN), reply(NOT_ACHIEVED), reply("a+b from the results")])
    steps = Steps()
    result, events = run(DagRunner(make_registry(main), step_runner=steps, max_replans=2))
    assert not any(isinstance(e, DagReplan) for e in events)
    assert len([e for e in events if isinstance(e, DagPlan)]) == 1
    assert len(steps.seen) == 3  # the steps ran once
    assert result.answer == "a+b from the results"
    assert main.replies == type(main.replies)()
    # The answer is not passed off as complete: the user is told, and so is the synthesis.
    [notice] = [e for e in events if isinstance(e, Notice)]
    assert "not fully reached (b is missing)" in notice.message
    synthesis = main.calls("stream")[-1].last_user_text
    assert "The check found the goal not fully reached: b is missing" in synthesis


def test_an_achieved_goal_gets_no_notice() -> None:
    main = ScriptedLLM([reply(PLAN), reply(ACHIEVED), reply("a+b")])
    _, events = run(DagRunner(make_registry(main), step_runner=Steps()))
    assert not any(isinstance(e, Notice) for e in events)
    assert "not fully reached" not in main.calls("stream")[-1].last_user_text


def test_planner_and_analyzer_use_the_models_configured_for_their_roles() -> None:
    main = ScriptedLLM([reply("the answer")])
    planner = ScriptedLLM([reply(PLAN), reply(ACHIEVED)], model_id="planner-model")
    registry = make_registry(main)
    registry.register("thinker", planner, roles=["reasoning"])
    result, _ = run(DagRunner(registry, step_runner=Steps()))
    assert len(planner.calls("chat")) == 2  # the plan and the analysis
    assert not main.calls("chat") and len(main.calls("stream")) == 1  # it only answered
    assert result.answer == "the answer"


def test_achieved_first_round_does_not_replan() -> None:
    main = ScriptedLLM([reply(PLAN), reply(ACHIEVED), reply("done")])
    _, events = run(DagRunner(make_registry(main), step_runner=Steps(), max_replans=3))
    assert not any(isinstance(e, DagReplan) for e in events)


def test_step_progress_events_are_forwarded() -> None:
    async def chatty(step: PlanStep, ctx: StepContext) -> StepOutput:
        await ctx.emit(Phase(phase="selecting_tools", total_tools=20))
        return StepOutput(answer="x")

    main = ScriptedLLM([reply(json.dumps({"steps": [{"id": "s", "task": "t"}]})),
                        reply(ACHIEVED), reply("x")])
    _, events = run(DagRunner(make_registry(main), step_runner=chatty))
    progress = [e for e in events if isinstance(e, DagStepProgress)]
    assert len(progress) == 1 and progress[0].data["total_tools"] == 20


def test_planner_connection_error_gives_error_event_then_done() -> None:
    main = ScriptedLLM([LLMConnectionError("Cannot reach the model server.")])
    result, events = run(DagRunner(make_registry(main), step_runner=Steps()))
    assert isinstance(events[-2], ErrorEvent) and "Cannot reach" in events[-2].message
    done = events[-1]
    assert isinstance(done, Done) and done.error == "Cannot reach the model server."
    assert result.error == done.error


def test_synthesis_failure_falls_back_to_the_analysis_draft() -> None:
    main = ScriptedLLM([reply(PLAN), reply(ACHIEVED), LLMConnectionError("stream broke")])
    result, events = run(DagRunner(make_registry(main), step_runner=Steps()))
    assert result.answer == "a+b"
    deltas = [e.content for e in events if isinstance(e, AnswerDelta)]
    assert deltas == ["a+b"]
    assert [type(e) for e in events[-4:]] == [ErrorEvent, AnswerDelta, AnswerDone, Done]
    # The failure is shown (a ReAct run does the same), but the answer stands.
    [error] = [e for e in events if isinstance(e, ErrorEvent)]
    assert error.kind == "synthesis" and "stream broke" in error.message
    assert events[-1].error is None


def test_a_dag_run_never_ends_with_an_empty_answer() -> None:
    async def silent(step: PlanStep, ctx: StepContext) -> StepOutput:
        return StepOutput(answer="")

    main = ScriptedLLM([reply(json.dumps({"steps": [{"id": "s", "task": "t"}]})),
                        reply('{"achieved": true}'), ""])
    _result, events = run(DagRunner(make_registry(main), step_runner=silent))
    done = events[-1]
    assert isinstance(done, Done) and done.answer.strip()  # says what went wrong instead
    assert "could not be completed" in done.answer


def test_failed_steps_still_end_in_an_answer() -> None:
    async def broken(step: PlanStep, ctx: StepContext) -> StepOutput:
        raise RuntimeError("tool exploded")

    main = ScriptedLLM([reply(PLAN), reply("Nothing could be done.")])
    result, events = run(DagRunner(make_registry(main), step_runner=broken, max_replans=0))
    outcomes = {e.step_id: e.outcome for e in events if isinstance(e, DagStepDone)}
    assert outcomes == {"step_1": "failed", "step_2": "failed", "step_3": "skipped"}
    analysis = next(e for e in events if isinstance(e, DagAnalysis))
    assert analysis.achieved is False  # decided from the states, no model call spent
    assert result.answer == "Nothing could be done."
    assert isinstance(events[-1], Done)


def test_stop_during_execution_ends_with_cancelled_done() -> None:
    main = ScriptedLLM([reply(PLAN)])
    runner = DagRunner(make_registry(main), step_runner=Steps(delay=5.0))
    events: list[Event] = []

    async def scenario() -> Any:
        task = asyncio.create_task(runner.run("goal", on_event=events.append))
        while not any(isinstance(e, DagStepStart) for e in events):
            await asyncio.sleep(0.01)
        runner.stop()
        return await asyncio.wait_for(task, 2.0)

    result = asyncio.run(scenario())
    assert result.cancelled
    done = events[-1]
    assert isinstance(done, Done) and done.cancelled and done.error is None
    assert {e.outcome for e in events if isinstance(e, DagStepDone)} == {"cancelled", "skipped"}
    assert not any(isinstance(e, AnswerStart) for e in events)


def test_stop_during_planning_cancels_the_model_call() -> None:
    main = ScriptedLLM([reply(PLAN)], delay=5.0)
    runner = DagRunner(make_registry(main), step_runner=Steps())
    events: list[Event] = []

    async def scenario() -> Any:
        task = asyncio.create_task(runner.run("goal", on_event=events.append))
        await asyncio.sleep(0.1)
        runner.stop()
        return await asyncio.wait_for(task, 1.0)

    result = asyncio.run(scenario())
    assert result.cancelled and isinstance(events[-1], Done) and events[-1].cancelled
    assert not any(isinstance(e, DagPlan) for e in events)


def test_cancelling_the_run_task_still_emits_done() -> None:
    main = ScriptedLLM([reply(PLAN)])
    runner = DagRunner(make_registry(main), step_runner=Steps(delay=5.0))
    events: list[Event] = []

    async def scenario() -> None:
        task = asyncio.create_task(runner.run("goal", on_event=events.append))
        await asyncio.sleep(0.1)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(scenario())
    assert isinstance(events[-1], Done) and events[-1].cancelled


def test_unknown_planner_model_is_a_clear_error() -> None:
    from desktop_app.core.errors import UnknownModelError

    with pytest.raises(UnknownModelError, match="No model named 'nope'"):
        DagRunner(make_registry(ScriptedLLM()), model="nope")


def test_planner_model_chosen_by_role() -> None:
    registry = make_registry(ScriptedLLM())
    small = registry.get("small")
    assert isinstance(small, ScriptedLLM)
    small.add(reply(json.dumps({"steps": [{"id": "s", "task": "t"}]})), reply(ACHIEVED),
              reply("from the fast model"))
    result, _ = run(DagRunner(registry, model="fast", step_runner=Steps()))
    assert result.answer == "from the fast model" and result.model == "small"


def test_stop_during_synthesis_keeps_the_streamed_part_as_the_answer() -> None:
    main = ScriptedLLM([reply(PLAN), reply(ACHIEVED), reply("word " * 200)], delay=0.02)
    runner = DagRunner(make_registry(main), step_runner=Steps())
    events: list[Event] = []

    async def scenario() -> Any:
        task = asyncio.create_task(runner.run("goal", on_event=events.append))
        while sum(isinstance(e, AnswerDelta) for e in events) < 3:
            await asyncio.sleep(0.01)
        runner.stop()
        return await asyncio.wait_for(task, 2.0)

    result = asyncio.run(scenario())
    done = events[-1]
    streamed = "".join(e.content for e in events if isinstance(e, AnswerDelta))
    assert isinstance(done, Done) and done.cancelled
    assert done.answer == streamed == result.answer
    assert 0 < len(streamed) < len("word " * 200)


def test_conversation_history_reaches_the_planner() -> None:
    main = ScriptedLLM([reply(PLAN), reply(ACHIEVED), reply("ok")])
    history = [ChatMessage.user("My budget is 500 euros."), ChatMessage.assistant("Noted.")]
    asyncio.run(DagRunner(make_registry(main), step_runner=Steps()).run(
        "find a laptop", history=history))
    assert "My budget is 500 euros." in main.requests[0].last_user_text


def test_interrupts_reach_analysis_replan_and_synthesis() -> None:
    from desktop_app.core.agent.events import Inject
    from desktop_app.core.agent.interrupts import InterruptQueue

    queue = InterruptQueue()

    class Interrupting(Steps):
        async def __call__(self, step: PlanStep, ctx: StepContext) -> StepOutput:
            if step.id == "step_1" and not self.seen:
                queue.put("Also give the answer in French.")
            return await super().__call__(step, ctx)

    main = ScriptedLLM([reply(PLAN), reply(NOT_ACHIEVED), reply(PLAN), reply(ACHIEVED),
                        reply("a+b (en français : a+b)")])
    events: list[Event] = []
    asyncio.run(DagRunner(make_registry(main), step_runner=Interrupting(), max_replans=1).run(
        "goal", interrupt_queue=queue, on_event=events.append))
    injects = [e for e in events if isinstance(e, Inject)]
    assert [e.content for e in injects] == ["Also give the answer in French."]
    chats = main.calls("chat")
    assert "Also give the answer in French." in chats[1].last_user_text  # analysis, round 1
    assert "Also give the answer in French." in chats[2].last_user_text  # re-plan
    assert "Also give the answer in French." in main.calls("stream")[0].last_user_text
