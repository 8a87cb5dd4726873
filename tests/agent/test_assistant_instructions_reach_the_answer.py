"""An assistant's own instructions reach the call that writes the answer on every path:
the shipped Translator answered in English and a custom "start with Arr" assistant did not,
because the synthesis wrote the answer under its own system prompt alone."""

from __future__ import annotations

import asyncio
import json

import pytest
from agent_helpers import Recorder

from desktop_app.core.agent import ReActAgent, drive_run
from desktop_app.core.dag.runner import DagRunner
from desktop_app.core.llm.registry import ModelRegistry
from desktop_app.core.llm.testing import ScriptedLLM, tool_call_reply
from desktop_app.core.llm.types import ChatMessage, LLMResult, Usage
from desktop_app.core.tools.builtin.calculator import CalculatorTool

ARR = "Start every answer with the word Arr."


def _system(request) -> str:
    return "\n".join(m.content for m in request.messages if m.role == "system")


@pytest.mark.anyio
@pytest.mark.parametrize("synthesis", ["separate", "conversation", "shared_prefix"])
async def test_after_a_tool_the_answer_is_written_under_the_instructions(synthesis) -> None:
    call = tool_call_reply(("calculator", {"expression": "6*7"}))
    llm = ScriptedLLM([call, "Arr, 42.", "Arr, 42."], tool_call=True)
    agent = ReActAgent(llm, [CalculatorTool()], system_prompt=ARR, synthesis=synthesis)
    await drive_run(agent, "What is 6*7?", emit=Recorder())
    assert len(llm.requests) >= 2
    assert all(ARR in _system(r) for r in llm.requests), [_system(r) for r in llm.requests]


@pytest.mark.anyio
async def test_a_text_only_answer_is_written_under_the_instructions() -> None:
    llm = ScriptedLLM(["Arr, Paris."], tool_call=True)
    agent = ReActAgent(llm, [CalculatorTool()], system_prompt=ARR)
    await drive_run(agent, "What is the capital of France?", emit=Recorder())
    assert llm.requests and all(ARR in _system(r) for r in llm.requests)


def test_a_dag_answer_is_written_under_the_instructions() -> None:
    def reply(text: str) -> LLMResult:
        return LLMResult(message=ChatMessage.assistant(text), usage=Usage.of(10, 5))

    plan = json.dumps({"steps": [{"id": "s", "task": "compute 6*7"}]})
    checked = '{"achieved": true, "confidence": 0.9, "reason": "ok", "final_answer": "42"}'
    main = ScriptedLLM([reply(plan), reply("42"), reply(checked), reply("Arr, 42.")],
                       default=reply("42"))
    registry = ModelRegistry()
    registry.register("m", main, default=True)
    runner = DagRunner(registry, max_replans=0, instructions=ARR)
    asyncio.run(runner.run("What is 6*7?"))
    answer_request = main.requests[-1]
    assert ARR in _system(answer_request), _system(answer_request)
