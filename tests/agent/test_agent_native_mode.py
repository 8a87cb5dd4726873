"""ReActAgent in native mode: mode selection, parallel calls, ordering, isolated failures."""

from __future__ import annotations

import time

import pytest
from agent_helpers import Recorder, echo_tool, failing_tool, registry

from desktop_app.core.agent import AnswerSignal, IterationDone, IterationStart, ReActAgent
from desktop_app.core.agent.runner import drive_run
from desktop_app.core.llm.testing import ScriptedLLM, json_final, tool_call_reply
from desktop_app.core.llm.types import ChatMessage, ToolCall

pytestmark = pytest.mark.anyio


def native_llm(*replies: object, **kwargs: object) -> ScriptedLLM:
    return ScriptedLLM(list(replies), tool_call=True, json_mode=True, **kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize(("tool_call", "use_native", "expected"), [
    (True, True, True), (True, False, False), (False, True, False), (False, False, False)])
def test_native_mode_needs_both_the_flag_and_the_ability(
        tool_call: bool, use_native: bool, expected: bool) -> None:
    agent = ReActAgent(ScriptedLLM(tool_call=tool_call), registry(), use_native_tools=use_native)
    assert agent._native_mode_active is expected


async def test_json_mode_is_used_when_native_is_disabled_on_a_capable_model() -> None:
    llm = native_llm(json_final("hi"))
    result = await ReActAgent(llm, registry(), use_native_tools=False).run("q")
    assert result.mode == "json" and llm.requests[0].tools is None and result.answer == "hi"
    # The model can do JSON mode, so the loop asks for a JSON object.
    assert llm.requests[0].response_format == {"type": "json_object"}


async def test_tools_are_passed_natively_and_text_reply_is_final() -> None:
    llm = native_llm(tool_call_reply(("calculator", {"expression": "2**10"})),
                     ChatMessage.assistant("It is 1024."))
    events = Recorder()
    result = await ReActAgent(llm, registry()).run("2^10?", on_event=events)
    assert result.mode == "native" and result.answer == "It is 1024."
    names = [spec["function"]["name"] for spec in llm.requests[0].tools or []]
    assert names == ["calculator", "current_time", "create_html_artifact"]
    assert "Available tools" not in llm.requests[0].messages[0].content
    sent = llm.requests[1].messages
    assert [m.role for m in sent[-2:]] == ["assistant", "tool"]
    assert sent[-1].tool_call_id == "call_0" and sent[-1].content == "2**10 = 1024"
    assert len(events.of(AnswerSignal)) == 1


async def test_parallel_calls_keep_request_order_and_one_failure_stays_isolated() -> None:
    # slow finishes last but must still come first; boom fails alone.
    tools = registry(echo_tool("slow", delay=0.2), echo_tool("fast"), failing_tool(),
                     builtin=False)
    llm = native_llm(tool_call_reply(("slow", {"text": "a"}), ("boom", {}),
                                     ("fast", {"text": "b"})),
                     ChatMessage.assistant("all done"))
    events = Recorder()
    started = time.perf_counter()
    result = await ReActAgent(llm, tools).run("go", on_event=events)
    assert time.perf_counter() - started < 0.6  # ran concurrently, not one after another
    sent = llm.requests[1].messages
    assistant, *tool_messages = sent[-4:]
    assert assistant.role == "assistant" and len(assistant.tool_calls) == 3
    assert [m.role for m in tool_messages] == ["tool"] * 3
    assert [m.tool_call_id for m in tool_messages] == ["call_0", "call_1", "call_2"]
    assert tool_messages[0].content == "slow: a"
    assert "RuntimeError: kaboom" in tool_messages[1].content
    assert tool_messages[2].content == "fast: b"
    assert [s.tool for s in result.steps] == ["slow", "boom", "fast"]
    assert [s.error is None for s in result.steps] == [True, False, True]
    # Every call got start/done events carrying its call id.
    assert {e.call_id for e in events.of(IterationStart)} == {"call_0", "call_1", "call_2"}
    done_order = [e.tool_name for e in events.of(IterationDone)]
    assert done_order.index("fast") < done_order.index("slow")  # reported as they finish
    assert result.answer == "all done"


@pytest.mark.parametrize(("arguments", "expected"), [
    ('"1234*5678"', "got a string"), ("[1, 2]", "got a list"),
    ('{"expression": "1+', "not valid JSON"), ("5", "got a number")])
async def test_bad_native_arguments_become_error_tool_messages(arguments: str,
                                                               expected: str) -> None:
    llm = native_llm(ChatMessage.assistant(tool_calls=[
        ToolCall(id="c1", name="calculator", arguments=arguments)]), ChatMessage.assistant("ok"))
    result = await ReActAgent(llm, registry()).run("compute")
    tool_message = llm.requests[1].messages[-1]
    assert tool_message.role == "tool" and tool_message.tool_call_id == "c1"
    assert tool_message.content.startswith("ERROR:") and expected in tool_message.content
    assert expected in (result.steps[0].error or "")


async def test_empty_arguments_mean_no_arguments() -> None:
    llm = native_llm(ChatMessage.assistant(tool_calls=[
        ToolCall(id="c1", name="current_time", arguments="")]), ChatMessage.assistant("ok"))
    result = await ReActAgent(llm, registry()).run("time?")
    assert result.steps[0].error is None and "ISO 8601" in result.steps[0].observation


async def test_missing_and_duplicate_call_ids_are_made_unique() -> None:
    calls = [ToolCall(id="", name="calculator", arguments='{"expression": "1"}'),
             ToolCall(id="x", name="calculator", arguments='{"expression": "2"}'),
             ToolCall(id="x", name="calculator", arguments='{"expression": "3"}')]
    llm = native_llm(ChatMessage.assistant(tool_calls=calls), ChatMessage.assistant("ok"))
    await ReActAgent(llm, registry()).run("q")
    sent = llm.requests[1].messages
    ids = [c.id for c in sent[-4].tool_calls]
    assert len(set(ids)) == 3 and ids[1] == "x"
    assert [m.tool_call_id for m in sent[-3:]] == ids


async def test_content_next_to_tool_calls_is_reported_as_reasoning() -> None:
    from desktop_app.core.agent import ThinkingDone

    llm = native_llm(tool_call_reply(("calculator", {"expression": "1"}), content="Let me add."),
                     ChatMessage.assistant("1", reasoning_content="easy"))
    events = Recorder()
    await ReActAgent(llm, registry()).run("q", on_event=events)
    assert [e.reasoning for e in events.of(ThinkingDone)] == ["Let me add.", "easy"]


async def test_reasoning_content_is_the_answer_when_content_is_empty() -> None:
    llm = native_llm(ChatMessage.assistant("", reasoning_content="The answer is 3."))
    result = await ReActAgent(llm, registry()).run("q")
    assert result.answer == "The answer is 3."


async def test_native_max_iterations_summary() -> None:
    llm = native_llm(*[tool_call_reply(("calculator", {"expression": f"1+{n}"}))
                       for n in range(4)])
    result = await ReActAgent(llm, registry(), max_iterations=4).run("loop")
    assert result.iterations == 4 and len(result.steps) == 4
    assert result.stop_reason == "max_iterations"
    assert "4. calculator — succeeded" in result.answer
    assert len(llm.requests) == 4


async def test_message_history_is_complete() -> None:
    llm = native_llm(tool_call_reply(("calculator", {"expression": "1"})),
                     ChatMessage.assistant("one"))
    result = await ReActAgent(llm, registry()).run("q", history=[ChatMessage.user("before"),
                                                                 ChatMessage.assistant("ok")])
    assert [m.role for m in result.messages] == ["system", "user", "assistant", "user",
                                                 "assistant", "tool", "assistant"]
    assert result.messages[-1].content == "one"


async def test_constrained_local_model_gets_the_action_schema_in_json_mode() -> None:
    llm = ScriptedLLM([json_final("ok")], json_mode=True)
    llm._constrained_json = True  # type: ignore[attr-defined]  # as LlamaCppLLM keeps it
    await ReActAgent(llm, registry()).run("q")
    response_format = llm.requests[0].response_format
    assert response_format is not None and response_format["type"] == "json_object"
    schema = response_format["schema"]
    assert schema["properties"]["tool"]["enum"] == ["calculator", "current_time",
                                                    "create_html_artifact"]
    assert schema["properties"]["type"]["enum"] == ["tool_call", "final_answer"]


async def test_a_call_that_repeats_the_last_one_ends_the_loop_without_running_again() -> None:
    call = tool_call_reply(("calculator", {"expression": "6*7"}))
    llm = native_llm(call, call, ChatMessage.assistant("never asked"))
    result = await ReActAgent(llm, registry()).run("6*7?")
    assert [s.tool for s in result.steps] == ["calculator"]  # run once, not twice
    # The answer comes from synthesis (no draft is made up from the results meanwhile).
    assert result.stop_reason == "final_answer" and result.answer == ""
    assert "42" in result.steps[0].observation
    assert len(llm.requests) == 2


async def test_the_same_call_with_a_key_the_tool_does_not_know_is_a_repeat() -> None:
    # The bundled model sent calculator("17.5 / 2340") and then, nine times, the same call
    # with "format": "float" added; the key is dropped before the call runs, so it is the
    # same call and the loop ends after the first.
    first = tool_call_reply(("calculator", {"expression": "17.5 / 2340"}))
    again = tool_call_reply(("calculator", {"expression": "17.5 / 2340", "format": "float"}))
    llm = native_llm(first, again, again, ChatMessage.assistant("never asked"))
    result = await ReActAgent(llm, registry()).run("17.5% of 2340?")
    assert [s.tool for s in result.steps] == ["calculator"]
    assert len(llm.requests) == 2


async def test_a_key_a_tool_accepts_makes_a_new_call_even_if_its_schema_does_not_list_it(
        ) -> None:
    # An MCP server may declare no properties and take any: {"path": "b.txt"} is new work.
    from desktop_app.core.tools.base import FunctionTool

    async def fetch(**kwargs: object) -> str:
        return f"fetched {kwargs}"

    tool = FunctionTool("fetch", "Fetch", {"type": "object", "properties": {}}, fetch)
    llm = native_llm(tool_call_reply(("fetch", {})),
                     tool_call_reply(("fetch", {"path": "b.txt"})),
                     tool_call_reply(("fetch", {"path": "b.txt"})),
                     ChatMessage.assistant("done"))
    result = await ReActAgent(llm, registry(tool, builtin=False)).run("fetch both")
    assert [s.args for s in result.steps] == [{}, {"path": "b.txt"}]  # the third repeats


async def test_computing_the_number_just_given_counts_as_done() -> None:
    llm = native_llm(tool_call_reply(("calculator", {"expression": "12.5+3.2"})),
                     tool_call_reply(("calculator", {"expression": "15.7"})))
    result = await ReActAgent(llm, registry()).run("sum?")
    assert len(result.steps) == 1 and "15.7" in result.steps[0].observation


async def test_a_repeated_read_is_not_a_repeat_after_something_changed() -> None:
    from desktop_app.core.agent.result import StepRecord, find_repeat

    read = StepRecord(tool="read_file", args={"path": "a"}, observation="x", error=None,
                      elapsed=0, iteration=1)
    write = StepRecord(tool="write_file", args={"path": "a"}, observation="ok", error=None,
                       elapsed=0, iteration=2, changed_something=True)
    assert find_repeat([read], "read_file", '{"path": "a"}') is read
    assert find_repeat([read, write], "read_file", {"path": "a"}) is None


@pytest.mark.parametrize("timeout", [None, 30.0])
async def test_a_tool_raising_timeout_error_is_its_own_failure_not_a_crash(
        timeout: float | None) -> None:
    from desktop_app.core.tools.base import FunctionTool

    async def slow_network(**_: object) -> str:
        raise TimeoutError("the server did not answer")

    tool = FunctionTool("fetch", "Fetch something", {"type": "object", "properties": {}},
                        slow_network)
    llm = native_llm(tool_call_reply(("fetch", {})), "It timed out.")
    result = await ReActAgent(llm, [tool], tool_timeout=timeout).run("fetch it")
    [step] = result.steps
    assert step.error and "timed out (the server did not answer)" in step.error
    assert "was stopped" not in step.error


async def test_a_tool_over_the_time_limit_is_stopped() -> None:
    import asyncio

    from desktop_app.core.tools.base import FunctionTool

    async def hangs(**_: object) -> str:
        await asyncio.sleep(60)
        return "never"

    tool = FunctionTool("hang", "Hangs", {"type": "object", "properties": {}}, hangs)
    llm = native_llm(tool_call_reply(("hang", {})), "It was stopped.")
    result = await ReActAgent(llm, [tool], tool_timeout=0.2).run("go")
    assert "did not finish within 0.2 s" in (result.steps[0].error or "")


async def test_an_artifact_s_source_returned_as_text_too_never_reaches_the_model() -> None:
    """Found in review: MCP servers return a page as a resource and as text; the model got
    the summary appended to the full source."""
    from desktop_app.core.tools.base import Artifact, FunctionTool, ToolResult

    page = "<!DOCTYPE html><html><body>" + "<p>row</p>" * 500 + "</body></html>"

    async def report(**_: object) -> ToolResult:
        return ToolResult(text=f"Made the report.\n{page}",
                          artifacts=[Artifact(name="report.html", mime_type="text/html",
                                              content=page)])

    tool = FunctionTool("report", "Make a report", {"type": "object", "properties": {}}, report)
    llm = native_llm(tool_call_reply(("report", {})), "Done.")
    result = await ReActAgent(llm, [tool]).run("make the report")
    seen = result.steps[0].observation
    assert "Made the report." in seen and "The user sees report.html in the preview pane." in seen
    assert "<p>row</p>" not in seen and len(seen) < 600


async def test_a_failed_call_sent_again_unchanged_ends_the_loop() -> None:
    bad = tool_call_reply(("calculator", {"expression": "2 +* 2"}))
    llm = native_llm(bad, bad, bad, ChatMessage.assistant("never asked"))
    result = await ReActAgent(llm, registry()).run("2+2?")
    assert len(result.steps) == 1 and result.steps[0].error  # run once, not three times
    assert len(llm.requests) == 2 and result.stop_reason == "final_answer"


def test_the_same_note_again_with_other_tags_is_a_repeat() -> None:
    from desktop_app.core.agent.result import StepRecord, find_repeat

    saved = StepRecord(tool="note_create", args={"title": "Note 1", "text": "x", "tags": ["a"]},
                       observation="Saved", error=None, elapsed=0, iteration=2,
                       changed_something=True)
    again = '{"title": "Note 1", "text": "x", "tags": ["b"]}'
    assert find_repeat([saved], "note_create", again, read_only=False,
                       required=["title", "text"]) is saved
    other = '{"title": "Note 2", "text": "x"}'
    assert find_repeat([saved], "note_create", other, read_only=False,
                       required=["title", "text"]) is None
    # Reading on from another offset is new work for a read-only tool.
    read = StepRecord(tool="read_file", args={"path": "a", "offset": 0}, observation="x",
                      error=None, elapsed=0, iteration=1)
    assert find_repeat([read], "read_file", '{"path": "a", "offset": 900}',
                       required=["path"]) is None


def test_local_models_get_a_short_loop() -> None:
    from desktop_app.core.agent.factory import MAX_ITERATIONS_LOCAL, make_agent

    class Local(ScriptedLLM):
        reuses_prompt_prefix = True

    assert make_agent(Local(), registry()).max_iterations == MAX_ITERATIONS_LOCAL
    assert make_agent(ScriptedLLM(), registry()).max_iterations == 50


async def test_local_models_decode_greedily_unless_a_temperature_is_chosen() -> None:
    from desktop_app.core.agent.factory import TEMPERATURE_LOCAL, make_agent

    class Local(ScriptedLLM):
        reuses_prompt_prefix = True

    local = Local(["Jupiter."], tool_call=True)
    await drive_run(make_agent(local, registry()), "Largest planet?", emit=Recorder())
    assert TEMPERATURE_LOCAL == 0.0
    assert local.requests[0].temperature == 0.0
    chosen = Local(["A poem."], tool_call=True)
    await drive_run(make_agent(chosen, registry(), temperature=0.9), "A poem?", emit=Recorder())
    assert chosen.requests[0].temperature == 0.9
    hosted = ScriptedLLM(["Jupiter."], tool_call=True)  # a hosted model keeps its default
    await drive_run(make_agent(hosted, registry()), "Largest planet?", emit=Recorder())
    assert hosted.requests[0].temperature is None
