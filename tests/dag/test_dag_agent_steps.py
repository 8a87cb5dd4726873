"""The default step runner: a fresh ReActAgent per step, on the model its hint selects."""

from __future__ import annotations

import asyncio
import json

from desktop_app.core.agent.events import Done, Event
from desktop_app.core.dag.events import DagStepDone, DagStepProgress, DagStepStart
from desktop_app.core.dag.executor import DAGExecutor
from desktop_app.core.dag.plan import PlanStep, validate_plan
from desktop_app.core.dag.runner import DagRunner
from desktop_app.core.errors import LLMConnectionError
from desktop_app.core.llm.registry import ModelRegistry
from desktop_app.core.llm.testing import ScriptedLLM, json_action, json_final
from desktop_app.core.tools.base import FunctionTool, ToolRegistry


def two_models() -> tuple[ModelRegistry, ScriptedLLM, ScriptedLLM]:
    big = ScriptedLLM(model_id="big-model")
    small = ScriptedLLM(model_id="small-model")
    registry = ModelRegistry()
    registry.register("big", big, roles=["general"], default=True)
    registry.register("small", small, roles=["fast"])
    return registry, big, small


async def _add(a: float, b: float) -> str:
    return str(a + b)


ADD = FunctionTool("add", "Add two numbers", {
    "type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
    "required": ["a", "b"]}, _add)


def test_step_with_model_hint_fast_runs_on_the_model_registered_as_fast() -> None:
    registry, big, small = two_models()
    small.add(json_final("small says 7"))
    big.add(json_final("big says 9"))
    plan = validate_plan({"steps": [
        {"id": "step_1", "task": "quick lookup of seven", "model_hint": "fast"},
        {"id": "step_2", "task": "hard reasoning about nine"}]},
        known_models=set(registry.names()) | set(registry.roles()))
    events: list[Event] = []
    result = asyncio.run(DAGExecutor(registry, ToolRegistry()).execute(
        plan, "the goal", on_event=events.append))
    assert [r.last_user_text for r in small.requests] and len(small.requests) == 1
    assert "quick lookup of seven" in small.requests[0].last_user_text
    assert "hard reasoning about nine" not in small.requests[0].last_user_text
    assert len(big.requests) == 1 and "hard reasoning about nine" in big.requests[0].last_user_text
    assert result.runs["step_1"].result == "small says 7" and result.runs["step_1"].model == "small"
    assert result.runs["step_2"].result == "big says 9" and result.runs["step_2"].model == "big"
    assert {e.step_id: e.model for e in events if isinstance(e, DagStepStart)} == {
        "step_1": "small", "step_2": "big"}


def test_model_hint_by_name_and_unknown_hint_falls_back_to_default() -> None:
    registry, _, _ = two_models()
    executor = DAGExecutor(registry)
    assert executor.resolve_model_name(PlanStep(id="a", task="t", model_hint="small")) == "small"
    assert executor.resolve_model_name(PlanStep(id="a", task="t", model_hint="general")) == "big"
    assert executor.resolve_model_name(PlanStep(id="a", task="t", model_hint="gpt-9")) == "big"
    assert executor.resolve_model_name(PlanStep(id="a", task="t")) == "big"


def test_every_step_gets_a_fresh_agent_bound_to_its_model() -> None:
    registry, big, small = two_models()
    executor = DAGExecutor(registry)
    step = PlanStep(id="a", task="t", model_hint="fast")
    first, second = executor._resolve_agent(step), executor._resolve_agent(step)
    assert first is not second
    assert first.llm is small and second.llm is small
    assert executor._resolve_agent(PlanStep(id="b", task="t")).llm is big


def test_step_agent_uses_tools_and_sees_dependency_results() -> None:
    registry, big, small = two_models()
    small.add(json_final("The price is 40."))
    big.add(json_action("add", {"a": 40, "b": 2}), json_final("Total 42"))
    plan = validate_plan({"steps": [
        {"id": "step_1", "task": "find the price", "model_hint": "fast"},
        {"id": "step_2", "task": "add the fee of 2", "dependencies": ["step_1"],
         "tool_hint": "add"}]})
    events: list[Event] = []
    result = asyncio.run(DAGExecutor(registry, ToolRegistry([ADD])).execute(
        plan, "total cost", on_event=events.append))
    assert result.runs["step_2"].result == "Total 42"
    step2_query = big.requests[0].last_user_text
    assert "Result of step_1 (find the price):\nThe price is 40." in step2_query
    assert "Suggested tool: add" in step2_query
    tool_events = [e for e in events if isinstance(e, DagStepProgress)
                   and e.step_id == "step_2" and e.data.get("type") == "iteration"
                   and e.data.get("status") == "done"]
    assert tool_events and tool_events[0].data["observation"] == "42"
    assert result.runs["step_2"].iterations == 2
    assert result.runs["step_2"].usage.total_tokens > 0


def test_failing_step_agent_keeps_its_usage_and_cascades() -> None:
    registry, big, small = two_models()
    small.add(LLMConnectionError("small model unreachable"))
    plan = validate_plan({"steps": [
        {"id": "step_1", "task": "a", "model_hint": "fast"},
        {"id": "step_2", "task": "b", "dependencies": ["step_1"]}]})
    events: list[Event] = []
    result = asyncio.run(DAGExecutor(registry).execute(plan, "g", on_event=events.append))
    assert result.runs["step_1"].state == "failed"
    assert "small model unreachable" in (result.runs["step_1"].error or "")
    assert result.runs["step_2"].state == "skipped" and big.requests == []
    done = [e for e in events if isinstance(e, DagStepDone)]
    assert [(e.step_id, e.outcome) for e in done] == [("step_1", "failed"), ("step_2", "skipped")]


def test_full_run_with_real_agents_on_two_models() -> None:
    registry, big, small = two_models()
    big.add(json.dumps({"steps": [
        {"id": "step_1", "task": "get seven", "model_hint": "fast"},
        {"id": "step_2", "task": "get nine", "model_hint": "fast"},
        {"id": "step_3", "task": "add them", "dependencies": ["step_1", "step_2"],
         "tool_hint": "add"}]}))
    small.add(json_final("7"), json_final("9"))
    big.add(json_action("add", {"a": 7, "b": 9}), json_final("16"),
            '{"achieved": true, "confidence": 0.95, "reason": "sum found", "final_answer": "16"}',
            "The sum is **16**.")
    events: list[Event] = []
    result = asyncio.run(DagRunner(registry, ToolRegistry([ADD])).run(
        "add seven and nine", on_event=events.append))
    done = events[-1]
    assert isinstance(done, Done) and done.error is None
    assert result.answer == done.answer == "The sum is **16**."
    assert len(small.requests) == 2 and len(big.requests) == 5
    assert done.iterations == 1 + 1 + 2
    assert big.replies == type(big.replies)() and small.replies == type(small.replies)()


async def _write(text: str) -> str:
    WRITTEN.append(text)
    return "written"


WRITTEN: list[str] = []
WRITE = FunctionTool("write_note", "Write a note", {
    "type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
    _write, read_only=False)


def test_tools_that_change_things_are_denied_without_a_confirmer() -> None:
    WRITTEN.clear()
    registry, big, _ = two_models()
    big.add(json_action("write_note", {"text": "hi"}), json_final("could not write"))
    plan = validate_plan({"steps": [{"id": "s1", "task": "write hi"}]})
    events: list[Event] = []
    asyncio.run(DAGExecutor(registry, ToolRegistry([WRITE])).execute(
        plan, "g", on_event=events.append))
    assert WRITTEN == []
    done = [e.data for e in events if isinstance(e, DagStepProgress)
            and e.data.get("type") == "iteration" and e.data.get("status") == "done"]
    assert done and done[0]["error"]


def test_a_given_confirmer_is_asked_and_can_allow() -> None:
    WRITTEN.clear()
    asked: list[str] = []

    async def allow(name: str, args: dict[str, object], change: object) -> bool:
        asked.append(name)
        return True

    registry, big, _ = two_models()
    big.add(json_action("write_note", {"text": "hi"}), json_final("written"))
    plan = validate_plan({"steps": [{"id": "s1", "task": "write hi"}]})
    asyncio.run(DAGExecutor(registry, ToolRegistry([WRITE]),
                            agent_options={"confirm": allow}).execute(plan, "g"))
    assert asked == ["write_note"] and WRITTEN == ["hi"]


def test_every_step_agent_has_a_tool_time_limit() -> None:
    """A hung tool must not hang a DAG step: steps get the app's default limit."""
    from desktop_app.core.agent.factory import DEFAULT_TOOL_TIMEOUT
    from desktop_app.core.dag.executor import DAGExecutor
    from desktop_app.core.dag.plan import PlanStep
    from desktop_app.core.llm.registry import ModelRegistry
    from desktop_app.core.llm.testing import ScriptedLLM

    registry = ModelRegistry()
    registry.register("m", ScriptedLLM(), default=True)
    agent = DAGExecutor(registry)._resolve_agent(PlanStep(id="s", task="t"))
    assert agent.tool_timeout == DEFAULT_TOOL_TIMEOUT
    custom = DAGExecutor(registry, agent_options={"tool_timeout": 5.0})
    assert custom._resolve_agent(PlanStep(id="s", task="t")).tool_timeout == 5.0


def test_a_step_that_hits_its_iteration_limit_passes_on_what_its_tools_returned() -> None:
    registry, big, _ = two_models()
    big.add(json_action("add", {"a": 40, "b": 2}), json_action("add", {"a": 1000, "b": 337}))
    plan = validate_plan({"steps": [{"id": "step_1", "task": "add things"}]},
                         known_models=set(registry.names()))
    result = asyncio.run(DAGExecutor(registry, ToolRegistry([ADD]), max_iterations=2).execute(
        plan, "the goal"))
    text = result.runs["step_1"].result or ""
    assert text.startswith("I stopped after 2 iterations")
    assert "What the tools returned:\n- add: 42" in text and "- add: 1337" in text


def test_step_agents_are_built_by_the_app_factory_like_every_run() -> None:
    """A local model's step gets the local policy and the repetition guard; a hosted one
    neither; both get a context guard and the tool timeout (agent/factory.py)."""
    from desktop_app.core.local_policy import RoutingPolicy

    class LocalScripted(ScriptedLLM):
        @property
        def reuses_prompt_prefix(self) -> bool:
            return True

    registry = ModelRegistry()
    registry.register("local", LocalScripted(model_id="local"), default=True)
    registry.register("hosted", ScriptedLLM(model_id="hosted"), roles=["fast"])
    executor = DAGExecutor(registry)
    local = executor._resolve_agent(PlanStep(id="a", task="t"))
    hosted = executor._resolve_agent(PlanStep(id="b", task="t", model_hint="fast"))
    assert isinstance(local.policy, RoutingPolicy) and local.guard_repetition
    assert hosted.policy is None and not hosted.guard_repetition
    for agent in (local, hosted):
        assert agent.context_guard is not None and agent.tool_timeout
        assert agent.max_iterations == executor.max_iterations


def test_a_step_that_called_its_tools_and_wrote_nothing_passes_on_their_results() -> None:
    """The bundled model computed 12*12 and 7*8 in a step and answered with nothing; the
    check then called the step failed and the answer never gave the number."""
    registry, big, _small = two_models()
    big.add(json_action("add", {"a": 12, "b": 30}), json_final(""))
    plan = validate_plan({"steps": [{"id": "step_1", "task": "add 12 and 30"}]},
                         known_models=set(registry.names()) | set(registry.roles()))
    result = asyncio.run(DAGExecutor(registry, ToolRegistry([ADD])).execute(plan, "the goal"))
    run = result.runs["step_1"]
    assert run.state == "done" and "42" in run.result and "add" in run.result, run.result
