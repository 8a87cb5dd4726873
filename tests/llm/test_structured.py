"""structured_llm_call: three-level degradation, validation, retries, call limits, errors."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from pydantic import BaseModel

from desktop_app.core.errors import LLMBadOutputError, LLMConnectionError, LLMProviderError
from desktop_app.core.llm import StructuredCallResult, structured_llm_call
from desktop_app.core.llm.structured import StructuredOutputError
from desktop_app.core.llm.testing import ScriptedLLM, tool_call_reply
from desktop_app.core.llm.types import ChatMessage, LLMResult, Usage


class Pick(BaseModel):
    tools: list[str]


SCHEMA_DICT: dict[str, Any] = {
    "type": "object",
    "properties": {"tools": {"type": "array", "items": {"type": "string"}}},
    "required": ["tools"],
}

# Async tests run on asyncio through anyio's pytest plugin (anyio ships with openai/mcp).
pytestmark = pytest.mark.anyio

MESSAGES = [ChatMessage.system("You pick tools."), ChatMessage.user("What is 2+2?")]


def _call(llm: ScriptedLLM, schema: Any = Pick, **kwargs: Any) -> Any:
    return structured_llm_call(llm, MESSAGES, schema, function_name="select_tools", **kwargs)


async def test_level1_native_call_succeeds_in_one_call() -> None:
    llm = ScriptedLLM([tool_call_reply(("select_tools", {"tools": ["calculator"]}))],
                      tool_call=True, json_mode=True)
    result = await _call(llm)
    assert isinstance(result, StructuredCallResult)
    assert result.value == Pick(tools=["calculator"])
    assert result.raw == {"tools": ["calculator"]}
    assert (result.level_used, result.llm_calls) == (1, 1)
    request = llm.requests[0]
    assert request.tool_choice == {"type": "function", "function": {"name": "select_tools"}}
    assert request.tools is not None
    assert request.tools[0]["function"]["parameters"]["required"] == ["tools"]


async def test_level1_broken_arguments_fall_through_to_level2() -> None:
    llm = ScriptedLLM([tool_call_reply(("select_tools", '{"tools": [')),
                       '{"tools": ["clock"]}'], tool_call=True, json_mode=True)
    result = await _call(llm)
    assert (result.level_used, result.llm_calls) == (2, 2)
    assert llm.requests[1].response_format == {"type": "json_object"}
    assert result.failures and "level 1" in result.failures[0]


async def test_level1_no_tool_call_falls_through() -> None:
    llm = ScriptedLLM(["I would pick the calculator.", '{"tools": ["calculator"]}'],
                      tool_call=True, json_mode=True)
    result = await _call(llm)
    assert result.level_used == 2
    assert "no tool call" in result.failures[0]


async def test_level2_reformat_retry_then_success() -> None:
    llm = ScriptedLLM(["not json at all", '{"tools": ["a"]}'], json_mode=True)
    result = await _call(llm)
    assert (result.level_used, result.llm_calls) == (2, 2)
    retry = llm.requests[1].messages
    assert retry[-2].role == "assistant" and retry[-2].content == "not json at all"
    assert "could not be parsed as valid JSON" in retry[-1].content


async def test_level3_extracts_json_from_prose_and_fences() -> None:
    llm = ScriptedLLM(['Sure!\n```json\n{"tools": ["calculator", "clock"]}\n```'])
    result = await _call(llm)
    assert result.value.tools == ["calculator", "clock"]
    assert (result.level_used, result.llm_calls) == (3, 1)
    assert llm.requests[0].response_format is None and llm.requests[0].tools is None
    # The schema instruction rides on the system prompt, after the caller's own text.
    system = llm.requests[0].messages[0].content
    assert system.startswith("You pick tools.") and '"tools"' in system


async def test_empty_object_is_not_success() -> None:
    llm = ScriptedLLM(["{}", '{"tools": ["x"]}'])
    result = await _call(llm)
    assert (result.level_used, result.llm_calls) == (3, 2)
    assert "empty" in result.failures[0]


async def test_schema_mismatch_triggers_retry_with_reason() -> None:
    llm = ScriptedLLM(['{"tools": "calculator"}', '{"tools": ["calculator"]}'])
    result = await _call(llm)
    assert result.llm_calls == 2
    assert "schema mismatch at tools" in llm.requests[1].messages[-1].content


async def test_json_schema_dict_is_validated() -> None:
    llm = ScriptedLLM(['{"tools": [1, 2]}', '{"tools": ["ok"]}'])
    result = await _call(llm, SCHEMA_DICT)
    assert result.value == {"tools": ["ok"]}
    assert "schema mismatch" in result.failures[0]


@pytest.mark.parametrize(("abilities", "max_calls", "levels"), [
    ({"tool_call": True, "json_mode": True}, 5, "1 (native function calling), 2 (JSON mode), 3"),
    ({"json_mode": True}, 4, "2 (JSON mode), 3 (plain text)"),
    ({}, 2, "3 (plain text)"),
])
async def test_total_failure_uses_exactly_the_max_calls_and_explains(
        abilities: dict[str, bool], max_calls: int, levels: str) -> None:
    llm = ScriptedLLM(default="I refuse to write JSON.", **abilities)
    with pytest.raises(StructuredOutputError) as info:
        await _call(llm)
    assert len(llm.requests) == max_calls
    error = info.value
    assert isinstance(error, LLMBadOutputError)
    assert error.llm_calls == max_calls
    assert f"levels tried: {levels}" in str(error)
    assert "no JSON object found" in str(error)
    assert error.usage.total_tokens > 0


async def test_default_value_returned_on_total_failure_with_usage() -> None:
    llm = ScriptedLLM(default="nope")
    result = await _call(llm, default_value=None)
    assert result.value is None and result.used_default
    assert result.llm_calls == 2 and result.usage.total_tokens > 0


async def test_regex_fallback_rescues_plain_text() -> None:
    def fallback(text: str) -> dict[str, Any] | None:
        names = re.findall(r"`(\w+)`", text)
        return {"tools": names} if names else None

    llm = ScriptedLLM(["Use `calculator` and `clock`."])
    result = await _call(llm, regex_fallback=fallback)
    assert result.value.tools == ["calculator", "clock"] and result.llm_calls == 1


async def test_parse_fn_builds_the_value_and_its_failure_counts_as_bad_output() -> None:
    def parse(raw: dict[str, Any]) -> tuple[str, ...]:
        if "bad" in raw["tools"]:
            raise ValueError("no bad tools")
        return tuple(raw["tools"])

    llm = ScriptedLLM(['{"tools": ["bad"]}', '{"tools": ["good"]}'])
    result = await _call(llm, parse_fn=parse)
    assert result.value == ("good",)
    assert "parse_fn rejected it: no bad tools" in result.failures[0]


async def test_usage_is_summed_over_all_calls() -> None:
    replies = [LLMResult(message=ChatMessage.assistant("nope"), usage=Usage.of(10, 1)),
               LLMResult(message=ChatMessage.assistant('{"tools": ["a"]}'), usage=Usage.of(20, 5))]
    result = await _call(ScriptedLLM(replies))
    assert result.usage == Usage.of(30, 6)


async def test_terminal_errors_are_raised_at_once() -> None:
    llm = ScriptedLLM([LLMConnectionError("server down")], tool_call=True, json_mode=True)
    with pytest.raises(LLMConnectionError):
        await _call(llm, default_value=None)
    assert len(llm.requests) == 1


async def test_provider_rejecting_tools_degrades_to_next_level() -> None:
    llm = ScriptedLLM([LLMProviderError("tools not supported"), '{"tools": ["a"]}'],
                      tool_call=True, json_mode=True)
    result = await _call(llm)
    assert result.level_used == 2 and "tools not supported" in result.failures[0]


async def test_constrained_model_gets_the_schema_in_response_format() -> None:
    llm = ScriptedLLM(['{"tools": ["a"]}'], json_mode=True)
    llm.constrained_json = True  # type: ignore[attr-defined]
    await _call(llm)
    response_format = llm.requests[0].response_format
    assert response_format is not None and response_format["type"] == "json_object"
    assert response_format["schema"]["required"] == ["tools"]


async def test_latex_in_values_survives_the_whole_chain() -> None:
    class Answer(BaseModel):
        answer: str

    llm = ScriptedLLM([r'{"answer": "\frac{1}{2}"}'])
    result = await structured_llm_call(llm, MESSAGES, Answer, function_name="answer")
    assert result.value.answer == "\\frac{1}{2}"
    assert json.loads(json.dumps(result.raw)) == {"answer": "\\frac{1}{2}"}


async def test_bad_schema_type_is_rejected() -> None:
    with pytest.raises(TypeError):
        await structured_llm_call(ScriptedLLM(), MESSAGES, 42, function_name="x")  # type: ignore[arg-type]


@pytest.mark.real_model
async def test_level1_against_the_real_loopback_server(openai_server: Any) -> None:
    """Forced tool_choice on a real OpenAI-compatible server returns real tool_calls."""
    from desktop_app.core.llm.openai_adapter import OpenAICompatibleLLM

    llm = OpenAICompatibleLLM(base_url=openai_server.base_url, model=openai_server.model,
                              context_size=4096)
    try:
        messages = [ChatMessage.system("You pick tools for a request. Tools: calculator "
                                       "(arithmetic), current_time (date and time)."),
                    ChatMessage.user("What is 1234*5678?")]
        result = await structured_llm_call(llm, messages, Pick, function_name="select_tools",
                                           temperature=0.0, max_tokens=60)
        assert result.level_used == 1 and result.llm_calls == 1
        assert isinstance(result.value, Pick) and result.raw == result.value.model_dump()
        assert result.usage.total_tokens > 0
    finally:
        await llm.aclose()
