"""A JSON-mode action one '}' short still runs (no reformat round trip)."""

from __future__ import annotations

import asyncio

from desktop_app.core.agent.react import ReActAgent
from desktop_app.core.llm.testing import ScriptedLLM, json_final
from desktop_app.core.tools.builtin.calculator import CalculatorTool


def test_a_tool_call_missing_its_closing_braces_is_run() -> None:
    llm = ScriptedLLM(['{"type": "tool_call", "tool": "calculator", "args": {"expression": "6*7"',
                       json_final("42")])
    result = asyncio.run(ReActAgent(llm, [CalculatorTool()]).run("6*7?"))
    assert [s.tool for s in result.steps] == ["calculator"]
    assert "42" in result.steps[0].observation
    assert result.iterations == 2  # no extra reformat request
    assert not any("could not be parsed" in m.content for m in llm.requests[1].messages)


def test_a_reply_cut_off_by_the_token_limit_gets_the_reformat_request() -> None:
    from desktop_app.core.llm.types import ChatMessage, LLMResult, Usage

    runaway = LLMResult(message=ChatMessage.assistant(
        '{"type": "final_answer", "answer": "5700000000000000000000000000'),
        usage=Usage.of(10, 160), finish_reason="length")
    llm = ScriptedLLM([runaway,
                       '{"type": "tool_call", "tool": "calculator", "args": {"expression": "6*7"}}',
                       json_final("42")])
    result = asyncio.run(ReActAgent(llm, [CalculatorTool()]).run("6*7?"))
    assert "could not be parsed" in llm.requests[1].messages[-1].content
    assert [s.tool for s in result.steps] == ["calculator"]
    assert result.answer == "42"
