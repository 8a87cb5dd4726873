"""The run driver and synthesis: exact event order, fallbacks, errors, cancellation, usage."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest
from agent_helpers import Recorder, echo_tool, registry

from desktop_app.core.agent import (
    AnswerDelta,
    Done,
    ErrorEvent,
    InterruptQueue,
    ReActAgent,
    drive_run,
    encode_sse,
    iter_run,
)
from desktop_app.core.agent.synthesis import SYNTHESIS_RESULT_LIMIT, synthesis_messages
from desktop_app.core.errors import LLMConnectionError, LLMTimeoutError
from desktop_app.core.llm.testing import (
    Request,
    ScriptedLLM,
    json_action,
    json_final,
    tool_call_reply,
)
from desktop_app.core.llm.types import ChatMessage, LLMResult, StreamChunk, Usage

pytestmark = pytest.mark.anyio


def deltas(events: Recorder) -> str:
    return "".join(e.content for e in events.of(AnswerDelta))


async def test_exact_event_order_json_mode() -> None:
    llm = ScriptedLLM([json_action("calculator", {"expression": "6*7"}), json_final("42"),
                       "The answer is 42."], chunk_size=8)
    events = Recorder()
    outcome = await drive_run(ReActAgent(llm, registry()), "6*7?", emit=events)
    assert events.kinds() == [
        "thinking:start:1", "thinking:done:1",
        "iteration:start:1:calculator", "iteration:done:1:calculator",
        "thinking:start:2", "thinking:done:2", "signal",
        "answer:start", "answer:delta", "answer:delta", "answer:delta", "answer:done", "done"]
    done = events.events[-1]
    assert isinstance(done, Done) and done.answer == "The answer is 42." == deltas(events)
    assert done.iterations == 2 and done.model == "fake-model" and not done.error
    assert outcome.answer == "The answer is 42." and not outcome.synthesis_failed


async def test_exact_event_order_native_mode_with_parallel_calls() -> None:
    llm = ScriptedLLM([tool_call_reply(("calculator", {"expression": "1+1"}),
                                       ("current_time", {"timezone": "UTC"})),
                       ChatMessage.assistant("2, and it is noon"), "Two; noon."],
                      tool_call=True, chunk_size=100)
    events = Recorder()
    await drive_run(ReActAgent(llm, registry()), "q", emit=events)
    assert events.kinds() == [
        "thinking:start:1", "thinking:done:1",
        "iteration:start:1:calculator", "iteration:done:1:calculator",
        "iteration:start:1:current_time", "iteration:done:1:current_time",
        "thinking:start:2", "thinking:done:2", "signal",
        "answer:start", "answer:delta", "answer:done", "done"]


async def test_every_event_encodes_to_well_formed_sse() -> None:
    llm = ScriptedLLM([json_action("calculator", {"expression": "2"}), json_final("2"), "2"])
    events = Recorder()
    await drive_run(ReActAgent(llm, registry()), "q", emit=events)
    for event in events.events:
        text = encode_sse(event)
        lines = text.split("\n")
        assert lines[0] == f"event: {event.channel}" and lines[1].startswith("data: {")
        assert text.endswith("\n\n") and len(lines) == 4


@pytest.mark.parametrize("native", [False, True])
async def test_synthesis_sees_tool_results_and_interrupts(native: bool) -> None:
    queue = InterruptQueue()
    big = "x" * (SYNTHESIS_RESULT_LIMIT + 500)

    def first(_: Request) -> Any:
        queue.put("also say hi")
        if native:
            return tool_call_reply(("echo", {"text": big}))
        return json_action("echo", {"text": big})

    second = ChatMessage.assistant("done") if native else json_final("done")
    llm = ScriptedLLM([first, second, "Hi! Done."], tool_call=native)
    agent = ReActAgent(llm, registry(echo_tool(), builtin=False))
    await drive_run(agent, "echo a lot", emit=Recorder(), interrupt_queue=queue)
    synthesis = llm.requests[-1]
    assert synthesis.kind == "stream" and synthesis.tools is None
    system, user = synthesis.messages
    assert "language of the user's original question" in system.content
    assert "echo a lot" in user.content and "also say hi" in user.content
    assert "1. echo(" in user.content and "Result: echo: xxx" in user.content
    # The result ("echo: " + the text) is cut to the limit, with a visible marker.
    result_line = user.content.split("Result: ", 1)[1]
    assert result_line.startswith("echo: " + "x" * (SYNTHESIS_RESULT_LIMIT - 6) + "\n… [cut:")


def test_synthesis_trace_shows_errors_and_artifact_summaries_not_sources() -> None:
    from desktop_app.core.agent.result import AgentResult, StepRecord
    from desktop_app.core.tools.base import Artifact

    step = StepRecord(tool="page", args={}, observation="The user sees r.html in the preview pane.",
                      error=None, elapsed=0.1,
                      artifacts=[Artifact(name="r.html", mime_type="text/html",
                                          content="<p>SOURCE</p>")])
    failed = StepRecord(tool="calc", args={"expression": "1/0"}, observation="",
                        error="Division by zero.", elapsed=0.0)
    result = AgentResult(answer="draft", steps=[step, failed], iterations=2, usage=Usage(),
                         messages=[])
    text = synthesis_messages("q", result)[1].content
    assert "The user sees r.html" in text and "SOURCE" not in text
    assert "Error: Division by zero." in text and "Draft answer:\ndraft" in text


class BrokenStreamLLM(ScriptedLLM):
    """Streams ``before`` and then fails; chat() works as scripted."""

    def __init__(self, replies: list[Any], before: str, **kwargs: Any) -> None:
        super().__init__(replies, **kwargs)
        self.before = before

    async def stream_chat(self, messages: Any, **kwargs: Any) -> AsyncIterator[StreamChunk]:
        self.requests.append(Request("stream", list(messages)))
        for char in self.before:
            yield StreamChunk(content=char)
        raise LLMTimeoutError("The model did not answer in time.")


async def test_synthesis_failure_falls_back_once_to_the_loop_answer() -> None:
    llm = BrokenStreamLLM([json_final("It is 42.")], before="")
    events = Recorder()
    outcome = await drive_run(ReActAgent(llm, registry()), "q", emit=events)
    assert outcome.synthesis_failed and outcome.answer == "It is 42."
    assert [e.content for e in events.of(AnswerDelta)] == ["It is 42."]
    assert len(llm.calls("stream")) == 1  # no second synthesis attempt
    [error] = events.of(ErrorEvent)
    assert error.kind == "synthesis" and "did not answer in time" in error.message
    assert events.kinds()[-3:] == ["answer:delta", "answer:done", "done"]
    assert events.events[-1].answer == "It is 42." and events.events[-1].error is None


async def test_synthesis_failure_after_partial_stream_does_not_repeat_text() -> None:
    llm = BrokenStreamLLM([json_final("It is 42.")], before="It is")
    events = Recorder()
    outcome = await drive_run(ReActAgent(llm, registry()), "q", emit=events)
    assert outcome.answer == "It is 42." == deltas(events)
    assert outcome.answer.count("It is") == 1


async def test_empty_synthesis_falls_back_to_the_loop_answer() -> None:
    llm = ScriptedLLM([json_final("Fine."), ""])
    events = Recorder()
    outcome = await drive_run(ReActAgent(llm, registry()), "q", emit=events)
    assert outcome.answer == "Fine." and not events.of(ErrorEvent)


async def test_max_iterations_still_emits_the_answer_events() -> None:
    llm = ScriptedLLM([json_action("calculator", {"expression": "1"})] * 2
                      + ["I could not finish."])
    events = Recorder()
    outcome = await drive_run(ReActAgent(llm, registry(), max_iterations=2), "q", emit=events)
    assert outcome.result is not None and outcome.result.stop_reason == "max_iterations"
    assert "stopped after 2 iterations" in outcome.result.answer
    assert "ran out of steps" in llm.requests[-1].messages[-1].content
    kinds = events.kinds()
    assert kinds[kinds.index("answer:start") + 1] == "answer:delta"
    assert kinds[-2:] == ["answer:done", "done"]
    assert outcome.answer == "I could not finish." == deltas(events)


async def test_llm_error_emits_error_then_done_with_partial_counts() -> None:
    llm = ScriptedLLM([json_action("calculator", {"expression": "1"}),
                       LLMConnectionError("Cannot reach the model server at http://x.",
                                          hint="Check that it is running.")])
    events = Recorder()
    outcome = await drive_run(ReActAgent(llm, registry()), "q", emit=events)
    error, done = events.events[-2:]
    assert isinstance(error, ErrorEvent) and isinstance(done, Done)
    assert error.kind == "LLMConnectionError"
    assert "Cannot reach the model server" in error.message and "Check that" in error.message
    assert done.error == error.message and done.iterations == 2 and done.usage.total_tokens > 0
    assert outcome.error == error.message and "answer:start" not in events.kinds()


async def test_unexpected_exception_is_reported_not_raised() -> None:
    llm = ScriptedLLM([RuntimeError("adapter bug")])
    events = Recorder()
    outcome = await drive_run(ReActAgent(llm, registry()), "q", emit=events)
    assert outcome.error is not None and "RuntimeError: adapter bug" in outcome.error
    assert isinstance(events.events[-1], Done)


async def test_cancellation_emits_done_cancelled_and_reraises() -> None:
    started = asyncio.Event()

    async def hang(**_: Any) -> str:
        started.set()
        await asyncio.sleep(30)
        return "never"

    from desktop_app.core.tools.base import FunctionTool
    slow = FunctionTool("slow", "Sleeps", {"type": "object", "properties": {}}, hang)
    llm = ScriptedLLM([json_action("slow", {})])
    events = Recorder()
    task = asyncio.create_task(drive_run(ReActAgent(llm, registry(slow)), "q", emit=events))
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    done = events.events[-1]
    assert isinstance(done, Done) and done.cancelled and done.iterations == 1


async def test_usage_adds_up_over_selection_loop_and_synthesis() -> None:
    def result(text: str, prompt: int, completion: int) -> LLMResult:
        return LLMResult(message=ChatMessage.assistant(text), usage=Usage.of(prompt, completion))

    tools = registry(*(echo_tool(f"tool_{i:02d}") for i in range(12)))  # 15 tools
    llm = ScriptedLLM([result('{"tools": ["calculator"]}', 100, 10),
                       LLMResult(message=ChatMessage.assistant(
                           json_action("calculator", {"expression": "1"})), usage=Usage.of(200, 20)),
                       result(json_final("1"), 300, 30),
                       result("One.", 400, 40)])
    events = Recorder()
    outcome = await drive_run(ReActAgent(llm, tools), "q", emit=events)
    assert outcome.usage == Usage.of(1000, 100)
    assert events.events[-1].usage == Usage.of(1000, 100)
    assert outcome.result is not None and outcome.result.synthesis_usage == Usage.of(400, 40)


async def test_iter_run_yields_the_full_sequence_and_closing_early_cancels() -> None:
    llm = ScriptedLLM([json_final("ok"), "Okay."])
    kinds = [type(e).__name__ async for e in iter_run(ReActAgent(llm, registry()), "q")]
    assert kinds[0] == "ThinkingStart" and kinds[-1] == "Done"

    gate = asyncio.Event()

    async def wait(**_: Any) -> str:
        await gate.wait()
        return "x"

    from desktop_app.core.tools.base import FunctionTool
    blocker = FunctionTool("wait", "Waits", {"type": "object", "properties": {}}, wait)
    agent = ReActAgent(ScriptedLLM([json_action("wait", {})]), registry(blocker))
    stream = iter_run(agent, "q")
    async for event in stream:
        if type(event).__name__ == "IterationStart":
            break
    await stream.aclose()  # must not hang on the blocked tool


async def test_async_event_sink_is_awaited() -> None:
    seen: list[str] = []

    async def sink(event: Any) -> None:
        await asyncio.sleep(0)
        seen.append(type(event).__name__)

    await drive_run(ReActAgent(ScriptedLLM([json_final("a"), "A"]), registry()), "q", emit=sink)
    assert seen[-1] == "Done" and "AnswerDelta" in seen
