"""What a step's agent is asked: goal, task, dependency results (compacted when large)."""

from __future__ import annotations

import asyncio

from desktop_app.core.dag.plan import PlanStep
from desktop_app.core.dag.results import StepRun
from desktop_app.core.dag.step_input import approx_tokens, build_step_query
from desktop_app.core.errors import LLMConnectionError
from desktop_app.core.llm.testing import ScriptedLLM
from desktop_app.core.llm.types import ChatMessage, LLMResult, Usage

STEP = PlanStep(id="step_3", task="compare the two prices", dependencies=("step_1", "step_2"),
                tool_hint="calculator")


def dep(step_id: str, result: str) -> StepRun:
    return StepRun(step=PlanStep(id=step_id, task=f"find price {step_id}"), state="done",
                   result=result)


def test_small_dependencies_are_passed_verbatim() -> None:
    query, usage = asyncio.run(build_step_query(
        "buy the cheaper laptop", STEP, [dep("step_1", "EUR 999"), dep("step_2", "EUR 1,049")]))
    assert "Overall goal: buy the cheaper laptop" in query
    assert "Your task (step_3): compare the two prices" in query
    assert "Suggested tool: calculator" in query
    assert "Result of step_1 (find price step_1):\nEUR 999" in query
    assert "EUR 1,049" in query
    assert usage == Usage()


def test_large_dependencies_are_compacted_with_the_step_dependency_hint() -> None:
    long_text = "The price list. " * 600 + "FINAL PRICE EUR 999"
    summary = LLMResult(message=ChatMessage.assistant("- step_1: price EUR 999\n- step_2: EUR 1,049"),
                        usage=Usage.of(700, 20))
    llm = ScriptedLLM(default=summary, context_size=2048)
    query, usage = asyncio.run(build_step_query(
        "buy the cheaper laptop", STEP, [dep("step_1", long_text), dep("step_2", long_text)],
        llm=llm))
    assert "price EUR 999" in query and "EUR 1,049" in query
    assert long_text not in query and approx_tokens(query) < 2048
    assert "compare the two prices" in query  # the task survives compaction verbatim
    assert llm.requests and usage.total_tokens == 720 * len(llm.requests)
    from desktop_app.core.context.prompts import HINT_PROMPTS

    # the summariser was instructed with the step_dependency prompt
    assert HINT_PROMPTS["step_dependency"].split("\n")[0] in llm.requests[0].system_text


def test_failing_compaction_model_still_gives_a_query_that_fits() -> None:
    long_text = "x" * 20000
    llm = ScriptedLLM(default=LLMConnectionError("down"), context_size=2048)
    query, _ = asyncio.run(build_step_query("goal", STEP, [dep("step_1", long_text)], llm=llm))
    assert "Your task (step_3)" in query
    assert approx_tokens(query) < 2048


def test_no_model_means_truncation() -> None:
    query, _ = asyncio.run(build_step_query("goal", STEP, [dep("step_1", "y" * 20000)],
                                            budget_tokens=300))
    assert "…[truncated]" in query and approx_tokens(query) < 600
