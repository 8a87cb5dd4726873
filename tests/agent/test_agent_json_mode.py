"""ReActAgent in JSON mode: actions, the parse-error sentinel, tool errors, artifacts, limits."""

from __future__ import annotations

import json

import pytest
from agent_helpers import Recorder, echo_tool, failing_tool, html_tool, registry

from desktop_app.core.agent import (
    AnswerSignal,
    IterationDone,
    ReActAgent,
    ThinkingDone,
)
from desktop_app.core.agent.json_mode import parse_action
from desktop_app.core.agent.prompts import REFORMAT_INSTRUCTION, UNPARSED_REASONING
from desktop_app.core.llm.testing import ScriptedLLM, json_action, json_final, tool_call_reply
from desktop_app.core.llm.types import ChatMessage, ToolCall

pytestmark = pytest.mark.anyio


async def test_tool_call_then_final_answer() -> None:
    llm = ScriptedLLM([json_action("calculator", {"expression": "1234*5678"}, "multiply"),
                       json_final("7006652", "done")])
    result = await ReActAgent(llm, registry()).run("what is 1234*5678?")
    assert result.answer == "7006652"
    assert result.iterations == 2 and result.mode == "json"
    assert result.stop_reason == "final_answer"
    [step] = result.steps
    assert (step.tool, step.args, step.error) == ("calculator", {"expression": "1234*5678"}, None)
    assert "7006652" in step.observation and step.iteration == 1
    # The observation went back to the model as a user message.
    second = llm.requests[1].messages
    assert second[-1].role == "user" and "7006652" in second[-1].content
    # Loop calls are non-streaming and carry no tools parameter in JSON mode.
    assert [r.kind for r in llm.requests] == ["chat", "chat"]
    assert all(r.tools is None for r in llm.requests)
    # A plain-text model gets no response_format.
    assert all(r.response_format is None for r in llm.requests)


async def test_system_prompt_lists_tools_with_schemas_and_query_is_pinned() -> None:
    llm = ScriptedLLM([json_final("hi")])
    result = await ReActAgent(llm, registry(), system_prompt="Be terse.").run("hello")
    system = llm.requests[0].messages[0]
    assert system.role == "system" and system.content.startswith("Be terse.")
    assert "calculator" in system.content and '"expression"' in system.content
    query = result.messages[1]
    assert query.role == "user" and query.content == "hello" and query.pinned


async def test_model_that_never_returns_json_gets_one_reformat_then_text_is_answer() -> None:
    llm = ScriptedLLM(["Paris is the capital of France.", "It is Paris, of course."])
    result = await ReActAgent(llm, registry()).run("capital of France?")
    assert len(llm.requests) == 2
    retry = llm.requests[1].messages
    assert retry[-2] == ChatMessage.assistant("Paris is the capital of France.")
    assert retry[-1].content == REFORMAT_INSTRUCTION
    assert result.answer == "It is Paris, of course."
    assert result.stop_reason == "unparsed_answer" and result.iterations == 2


async def test_reformat_retry_that_succeeds_continues_the_loop() -> None:
    llm = ScriptedLLM(["let me compute", json_action("calculator", {"expression": "2+2"}),
                       json_final("4")])
    result = await ReActAgent(llm, registry()).run("2+2")
    assert result.answer == "4" and len(result.steps) == 1 and result.iterations == 3


def test_parse_action_sentinel_and_variants() -> None:
    parse = ReActAgent._parse_action
    sentinel = parse("no json here")
    assert sentinel.kind == "final_answer" and sentinel.reasoning == UNPARSED_REASONING
    assert sentinel.unparsed and sentinel.answer == "no json here"
    fenced = parse('```json\n{"type": "tool_call", "tool": "calculator", "args": {"expression": "1"}}\n```')
    assert (fenced.kind, fenced.tool, fenced.args) == ("tool_call", "calculator", {"expression": "1"})
    loose = parse('{"tool_name": "clock", "arguments": {}}')
    assert (loose.kind, loose.tool) == ("tool_call", "clock")
    langchain = parse('{"action": "final_answer", "action_input": "42"}')
    assert (langchain.kind, langchain.answer) == ("final_answer", "42")
    structured = parse('{"type": "final_answer", "answer": {"x": 1}}')
    assert json.loads(structured.answer) == {"x": 1}
    assert parse('{"type": "tool_call"}').unparsed  # a tool call without a tool


def test_latex_backslashes_survive_in_the_final_answer() -> None:
    action = ReActAgent._parse_action(r'{"type": "final_answer", "answer": "\frac{1}{2} = 0.5"}')
    assert action.answer == "\\frac{1}{2} = 0.5"


async def test_reasoning_content_fills_empty_reasoning() -> None:
    reply = ChatMessage.assistant(json_final("ok"), reasoning_content="I thought hard.")
    events = Recorder()
    await ReActAgent(ScriptedLLM([reply]), registry()).run("q", on_event=events)
    assert events.of(ThinkingDone)[0].reasoning == "I thought hard."


async def test_json_reasoning_wins_over_reasoning_content() -> None:
    reply = ChatMessage.assistant(json_final("ok", "from json"), reasoning_content="hidden")
    events = Recorder()
    await ReActAgent(ScriptedLLM([reply]), registry()).run("q", on_event=events)
    assert events.of(ThinkingDone)[0].reasoning == "from json"


@pytest.mark.parametrize(("args", "expected"), [
    ('"1234*5678"', "got a string"),
    ("[1, 2]", "got a list"),
    ('{"expression": ', "not valid JSON"),
])
async def test_bad_tool_args_become_an_error_observation(args: str, expected: str) -> None:
    # The model wrote args as a string, a list, or broken JSON text.
    raw = f'{{"type": "tool_call", "tool": "calculator", "args": {args}}}'
    if expected == "not valid JSON":
        raw = json.dumps({"type": "tool_call", "tool": "calculator", "args": args})
    llm = ScriptedLLM([raw, json_final("sorry")])
    result = await ReActAgent(llm, registry()).run("compute")
    [step] = result.steps
    assert step.error is not None and expected in step.error
    observation = llm.requests[1].messages[-1].content
    assert "ERROR" in observation and expected in observation
    assert result.answer == "sorry"


async def test_args_as_json_text_of_an_object_are_accepted() -> None:
    llm = ScriptedLLM([json.dumps({"type": "tool_call", "tool": "calculator",
                                   "args": '{"expression": "6*7"}'}), json_final("42")])
    result = await ReActAgent(llm, registry()).run("6*7")
    assert result.steps[0].error is None and "42" in result.steps[0].observation


async def test_schema_violation_is_reported_with_the_expected_shape() -> None:
    llm = ScriptedLLM([json_action("calculator", {"terms": [1, 1]}), json_final("?")])
    result = await ReActAgent(llm, registry()).run("1+1")
    error = result.steps[0].error
    assert error is not None and "expression" in error


async def test_unknown_tool_and_tool_exception_are_observations() -> None:
    llm = ScriptedLLM([json_action("teleport", {}), json_action("boom", {}), json_final("done")])
    result = await ReActAgent(llm, registry(failing_tool())).run("go")
    unknown, crashed = result.steps
    assert "Unknown tool 'teleport'" in (unknown.error or "")
    assert "calculator" in (unknown.error or "")  # lists what is available
    assert "RuntimeError: kaboom" in (crashed.error or "")
    assert result.answer == "done"


async def test_html_artifact_is_summarised_for_the_llm_but_kept_for_the_ui() -> None:
    events = Recorder()
    llm = ScriptedLLM([json_action("make_page", {"title": "Q3"}), json_final("see preview")])
    result = await ReActAgent(llm, registry(html_tool())).run("make a page", on_event=events)
    step = result.steps[0]
    assert step.artifacts[0].name == "report.html"
    assert "SECRET-SOURCE" in step.artifacts[0].content
    assert "The user sees report.html in the preview pane." \
        in step.observation
    sent = "\n".join(m.content for r in llm.requests for m in r.messages)
    assert "SECRET-SOURCE" not in sent
    [done] = events.of(IterationDone)
    assert done.artifacts[0].content == step.artifacts[0].content
    assert "SECRET-SOURCE" not in done.observation
    assert result.artifacts == step.artifacts


async def test_max_iterations_gives_a_summary_of_the_tool_calls() -> None:
    llm = ScriptedLLM([json_action("calculator", {"expression": "1+1"}),
                       json_action("boom", {}), json_action("calculator", {"expression": "2+2"})])
    events = Recorder()
    result = await ReActAgent(llm, registry(failing_tool()), max_iterations=3).run(
        "loop", on_event=events)
    assert result.stop_reason == "max_iterations" and result.iterations == 3
    assert "3 iterations" in result.answer
    assert "1. calculator — succeeded" in result.answer
    assert "2. boom — failed: Tool 'boom' failed: RuntimeError: kaboom" in result.answer
    assert not events.of(AnswerSignal)


async def test_max_iterations_with_prose_keeps_the_prose() -> None:
    llm = ScriptedLLM(["plain words"])
    result = await ReActAgent(llm, registry(), max_iterations=1).run("q")
    assert result.answer == "plain words" and result.stop_reason == "unparsed_answer"


async def test_history_with_native_tool_messages_is_rewritten_for_json_mode() -> None:
    history = [ChatMessage.user("earlier"),
               tool_call_reply(("calculator", {"expression": "1+1"})),
               ChatMessage.tool("1+1 = 2", tool_call_id="call_0", name="calculator"),
               ChatMessage.assistant("It is 2.")]
    llm = ScriptedLLM([json_final("ok")])
    await ReActAgent(llm, registry()).run("and now?", history=history)
    sent = llm.requests[0].messages
    assert [m.role for m in sent] == ["system", "user", "assistant", "user", "assistant", "user"]
    assert not any(m.tool_calls or m.role == "tool" for m in sent)
    assert '"tool": "calculator"' in sent[2].content and "1+1 = 2" in sent[3].content
    # The earlier prose answer is shown as the JSON the model is expected to write.
    assert json.loads(sent[4].content) == {"type": "final_answer", "answer": "It is 2."}


async def test_old_system_prompt_in_history_is_replaced() -> None:
    llm = ScriptedLLM([json_final("ok")])
    await ReActAgent(llm, registry()).run(
        "q", history=[ChatMessage.system("old"), ChatMessage.user("hi")])
    assert [m.content for m in llm.requests[0].messages[1:]] == ["hi", "q"]


def test_tool_call_helper_arguments_are_json_text() -> None:
    # Guard for the test helper other tests rely on.
    assert ToolCall(id="1", name="x", arguments='{"a": 1}').parsed_arguments() == {"a": 1}


def test_invalid_max_iterations_is_rejected() -> None:
    with pytest.raises(ValueError):
        ReActAgent(ScriptedLLM(), registry(), max_iterations=0)


async def test_echo_tool_roundtrip_in_json_mode() -> None:
    llm = ScriptedLLM([json_action("echo", {"text": "hé"}), json_final("hé")])
    result = await ReActAgent(llm, registry(echo_tool(), builtin=False)).run("echo")
    assert result.steps[0].observation == "echo: hé"


async def test_hanging_tool_is_stopped_by_the_tool_timeout() -> None:
    import asyncio

    from desktop_app.core.tools.base import FunctionTool

    async def hang() -> str:
        await asyncio.sleep(30)
        return "never"

    slow = FunctionTool("hang", "Never returns", {"type": "object", "properties": {}}, hang)
    llm = ScriptedLLM([json_action("hang", {}), json_final("gave up")])
    result = await ReActAgent(llm, registry(slow), tool_timeout=0.05).run("q")
    assert "did not finish within 0.05 s" in (result.steps[0].error or "")
    assert result.answer == "gave up"


def test_a_record_with_a_name_is_not_a_tool_call() -> None:
    record = '{"name": "Alice", "age": 30}'
    action = parse_action(record, tool_names={"calculator"})
    assert action.kind == "final_answer"  # the sentinel: asked to reformat, never run
    assert parse_action('{"action": "Alice"}', tool_names={"calculator"}).kind == "final_answer"
    # The same shapes naming a real tool, or carrying arguments, still are calls.
    call = parse_action('{"name": "calculator", "arguments": {"expression": "2+2"}}')
    assert (call.kind, call.tool, call.args) == ("tool_call", "calculator", {"expression": "2+2"})
    assert parse_action('{"action": "calculator"}', tool_names={"calculator"}).tool == "calculator"


def test_a_json_array_is_an_answer_not_its_first_object() -> None:
    reply = '[{"name": "Alice", "age": 30}, {"name": "Bob", "age": 25}]'
    action = parse_action(reply, tool_names={"calculator"})
    assert action.kind == "final_answer" and action.answer == reply and not action.unparsed
    fenced = parse_action("```json\n" + reply + "\n```")
    assert fenced.kind == "final_answer" and "Bob" in fenced.answer
