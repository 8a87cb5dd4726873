"""The planner against a real OpenAI-compatible server (llama-cpp-python's, on loopback).

There the planner's structured call goes through level 1: a forced ``submit_plan`` function
whose parameters are the plan schema, which the server turns into a grammar. This checks the
schema survives that trip (``$defs``/``$ref`` included) and the plan that comes back validates.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest

from desktop_app.core.dag.planner import DAGPlanner
from desktop_app.core.llm.openai_adapter import OpenAICompatibleLLM
from desktop_app.core.llm.registry import ModelRegistry
from desktop_app.core.tools.base import ToolRegistry
from desktop_app.core.tools.builtin import CalculatorTool

log = logging.getLogger(__name__)

pytestmark = pytest.mark.real_model


def test_planner_over_native_function_calling_on_a_real_server(openai_server: Any) -> None:
    async def scenario() -> Any:
        llm = OpenAICompatibleLLM(base_url=openai_server.base_url, model=openai_server.model,
                                  name="server", context_size=4096, timeout=300)
        registry = ModelRegistry()
        registry.register("server", llm, roles=["general", "fast"], default=True)
        try:
            planner = DAGPlanner(llm, models=registry, max_tokens=300)
            return await planner.plan("Compute 17 * 23, then add 100 to it.",
                                      ToolRegistry([CalculatorTool()]))
        finally:
            await llm.aclose()

    plan = asyncio.run(scenario())
    log.warning("plan from the real server: %s (warnings %s, fallback %s, usage %s)",
                [(s.id, s.task, s.dependencies, s.tool_hint, s.model_hint) for s in plan.steps],
                plan.warnings, plan.fallback, plan.usage)
    assert plan.steps and all(step.task for step in plan.steps)
    assert plan.usage.total_tokens > 0
    assert not plan.fallback, f"the server's plan did not validate: {plan.warnings}"
