"""DAGPlanner through structured_llm_call, with scripted models, and the PlanAnalyzer."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from desktop_app.core.dag.analyzer import Analysis, PlanAnalyzer, parse_bool, parse_confidence
from desktop_app.core.dag.plan import Plan, PlanStep
from desktop_app.core.dag.planner import DAGPlanner
from desktop_app.core.dag.results import ExecutionResult, StepRun
from desktop_app.core.errors import LLMConnectionError
from desktop_app.core.llm.registry import ModelRegistry
from desktop_app.core.llm.testing import ScriptedLLM, tool_call_reply
from desktop_app.core.tools.base import FunctionTool, ToolRegistry


def plan_json(*steps: dict[str, Any]) -> str:
    return json.dumps({"steps": list(steps)})


def registry_with(llm: ScriptedLLM) -> ModelRegistry:
    registry = ModelRegistry()
    registry.register("big", llm, roles=["general"], default=True)
    registry.register("small", ScriptedLLM(model_id="small"), roles=["fast"])
    return registry


async def _noop() -> str:
    return "x"


TOOLS = ToolRegistry([FunctionTool("calculator", "Evaluate arithmetic", {"type": "object"},
                                   lambda **_: _noop())])


def test_plan_from_plain_text_model_with_prose_around_the_json() -> None:
    llm = ScriptedLLM(["Sure! Here is the plan:\n```json\n" + plan_json(
        {"id": "step_1", "task": "a", "model_hint": "fast"},
        {"id": "step_2", "task": "b", "dependencies": "step_1", "tool_hint": "calculator"},
    ) + "\n```"])
    plan = asyncio.run(DAGPlanner(llm, models=registry_with(llm)).plan("goal", TOOLS))
    assert plan.ids == ["step_1", "step_2"]
    assert plan.step("step_2").dependencies == ("step_1",)
    assert plan.step("step_1").model_hint == "fast"
    assert plan.step("step_2").tool_hint == "calculator"
    assert not plan.fallback and plan.usage.total_tokens > 0
    # the prompt told the model about the tools and the models it may hint
    system = llm.requests[0].system_text
    assert "calculator" in system and "small (roles: fast)" in system
    assert "Goal: goal" in llm.requests[0].last_user_text


def test_plan_through_native_function_calling() -> None:
    llm = ScriptedLLM([tool_call_reply(("submit_plan", {"steps": [
        {"id": "step_1", "task": "only step", "dependencies": []}]}))], tool_call=True)
    plan = asyncio.run(DAGPlanner(llm).plan("goal"))
    assert plan.ids == ["step_1"]
    request = llm.requests[0]
    assert request.tool_choice == {"type": "function", "function": {"name": "submit_plan"}}
    assert request.tools is not None and "steps" in json.dumps(request.tools[0])


def test_unknown_model_hint_is_ignored_with_a_warning() -> None:
    llm = ScriptedLLM([plan_json({"id": "step_1", "task": "a", "model_hint": "gpt-9"})])
    plan = asyncio.run(DAGPlanner(llm, models=registry_with(llm)).plan("goal"))
    assert plan.step("step_1").model_hint is None
    assert any("unknown model_hint 'gpt-9'" in w for w in plan.warnings)


def test_cyclic_plan_is_sent_back_with_the_named_cycle_then_fixed() -> None:
    llm = ScriptedLLM([
        plan_json({"id": "step_1", "task": "a", "dependencies": ["step_2"]},
                  {"id": "step_2", "task": "b", "dependencies": ["step_1"]}),
        plan_json({"id": "step_1", "task": "a"}, {"id": "step_2", "task": "b",
                                                  "dependencies": ["step_1"]}),
    ])
    plan = asyncio.run(DAGPlanner(llm).plan("goal"))
    assert plan.ids == ["step_1", "step_2"] and not plan.fallback
    retry = llm.requests[1].last_user_text
    assert "cycle: step_1 -> step_2 -> step_1" in retry
    assert len(llm.requests) == 2


def test_unusable_planner_output_falls_back_to_a_single_step() -> None:
    llm = ScriptedLLM(default="I cannot make plans, sorry.")
    plan = asyncio.run(DAGPlanner(llm, max_attempts=2).plan("write a haiku"))
    assert plan.fallback and plan.ids == ["step_1"] and plan.steps[0].task == "write a haiku"
    assert "Planning failed" in plan.warnings[0]
    assert len(llm.requests) == 4  # 2 attempts x (answer + one reformat retry)
    assert plan.usage.total_tokens > 0  # tokens spent on failed attempts still count


def test_oversized_plan_twice_falls_back() -> None:
    big = plan_json(*({"id": f"step_{i}", "task": f"t{i}"} for i in range(1, 6)))
    llm = ScriptedLLM([big, big])
    plan = asyncio.run(DAGPlanner(llm, max_steps=3).plan("goal"))
    assert plan.fallback
    assert "5 steps; the limit is 3" in plan.warnings[0]


def test_connection_errors_propagate() -> None:
    llm = ScriptedLLM([LLMConnectionError("server down")])
    with pytest.raises(LLMConnectionError):
        asyncio.run(DAGPlanner(llm).plan("goal"))


def test_context_of_earlier_rounds_reaches_the_planner() -> None:
    llm = ScriptedLLM([plan_json({"id": "step_1", "task": "a"})])
    asyncio.run(DAGPlanner(llm).plan("goal", None, "step_1 failed: no data"))
    assert "step_1 failed: no data" in llm.requests[0].last_user_text


# --- analyzer ------------------------------------------------------------------------------
def execution(*states: tuple[str, str, str]) -> ExecutionResult:
    plan = Plan(steps=[PlanStep(id=i, task=f"task {i}") for i, _, _ in states])
    runs = {i: StepRun(step=plan.step(i), state=s, result=r)  # type: ignore[arg-type]
            for i, s, r in states}
    return ExecutionResult(plan=plan, runs=runs)


@pytest.mark.parametrize(("raw", "expected"), [
    (True, True), (False, False), ("false", False), ("False", False), ("no", False),
    ("true", True), ("yes", True), (0, False), (1, True), ("0", False),
])
def test_parse_bool(raw: object, expected: bool) -> None:
    assert parse_bool(raw) is expected


@pytest.mark.parametrize(("raw", "expected"), [
    (0.8, 0.8), ("0.8", 0.8), ("80%", 0.8), (1.7, 1.0), (-0.2, 0.0), ("high", 0.9),
    (None, 0.0), ("confidence: 0.35", 0.35),
])
def test_parse_confidence_is_clamped(raw: object, expected: float) -> None:
    assert parse_confidence(raw) == pytest.approx(expected)


def test_analysis_schema_reads_sloppy_types() -> None:
    analysis = Analysis.model_validate({"achieved": "false", "confidence": "0.8",
                                        "reason": None})
    assert analysis.achieved is False and analysis.confidence == 0.8 and analysis.reason == ""
    with pytest.raises(ValueError):
        Analysis.model_validate({"achieved": "maybe"})


def test_analyzer_parses_the_verdict() -> None:
    llm = ScriptedLLM([('{"achieved": "true", "confidence": "0.9", "reason": "all there", '
                        '"final_answer": "42"}')])
    outcome = asyncio.run(PlanAnalyzer(llm).analyze(
        "goal", execution(("s1", "done", "forty-two"))))
    assert outcome.from_model
    assert outcome.analysis.achieved is True and outcome.analysis.confidence == 0.9
    assert outcome.analysis.final_answer == "42"
    assert "forty-two" in llm.requests[0].last_user_text


def test_analyzer_string_false_means_not_achieved() -> None:
    llm = ScriptedLLM(['{"achieved": "false", "confidence": 3, "reason": "missing b"}'])
    outcome = asyncio.run(PlanAnalyzer(llm).analyze("goal", execution(("s1", "done", "a"))))
    assert outcome.analysis.achieved is False and outcome.analysis.confidence == 1.0


def test_analyzer_unreadable_output_falls_back_to_step_states() -> None:
    llm = ScriptedLLM(default="looks fine to me")
    ok = asyncio.run(PlanAnalyzer(llm).analyze("goal", execution(("s1", "done", "a"))))
    assert not ok.from_model and ok.analysis.achieved is True
    assert ok.usage.total_tokens > 0
    partial = asyncio.run(PlanAnalyzer(llm).analyze(
        "goal", execution(("s1", "done", "a"), ("s2", "failed", ""))))
    assert partial.analysis.achieved is False


def test_analyzer_skips_the_model_when_no_step_succeeded() -> None:
    llm = ScriptedLLM()
    outcome = asyncio.run(PlanAnalyzer(llm).analyze("goal", execution(("s1", "failed", ""))))
    assert outcome.analysis.achieved is False and llm.requests == []
