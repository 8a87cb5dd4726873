"""Run metrics: time to the first answer word, and prompt and output speed per streamed
call, never output tokens over the whole run's time (tool loop included)."""

from __future__ import annotations

import pytest
from agent_helpers import Recorder

from desktop_app.core.agent import ReActAgent, drive_run
from desktop_app.core.agent.metrics import CallTiming, summarize
from desktop_app.core.llm.testing import ScriptedLLM
from desktop_app.core.tools.base import ToolRegistry

pytestmark = pytest.mark.anyio


def test_speeds_come_from_each_calls_reading_and_writing_time() -> None:
    calls = [CallTiming(started=0.0, first_chunk=0.5, ended=2.5, prompt_tokens=200,
                        completion_tokens=41),
             CallTiming(started=3.0, first_chunk=3.5, ended=4.5, prompt_tokens=300,
                        completion_tokens=21),
             CallTiming(started=5.0)]  # stopped before its first chunk: no sample
    metrics = summarize(calls, started=0.0, first_answer_at=3.6)
    assert metrics.ttft == 3.6
    assert metrics.prompt_tps == 500.0  # 500 tokens read in 1.0 s
    assert metrics.output_tps == 20.0  # 60 tokens after the first ones, in 3.0 s
    assert summarize([], started=0.0, first_answer_at=None).model_dump() == {
        "ttft": None, "prompt_tps": None, "output_tps": None}


async def test_a_run_reports_measured_metrics_in_done() -> None:
    delay = 0.05
    llm = ScriptedLLM(["one two three four five six seven eight"], tool_call=True,
                      delay=delay, chunk_size=5)
    events = Recorder()
    outcome = await drive_run(ReActAgent(llm, ToolRegistry()), "count", emit=events)
    metrics = outcome.done.metrics
    assert metrics is not None and metrics.ttft is not None
    assert delay <= metrics.ttft < outcome.done.elapsed
    usage = outcome.done.usage
    chunks = -(-len(outcome.answer) // 5)
    # Writing took at least (chunks - 1) delays: the speed cannot be higher than this.
    fastest = (usage.completion_tokens - 1) / ((chunks - 1) * delay)
    assert metrics.output_tps is not None and 0.2 * fastest < metrics.output_tps <= fastest * 1.01
    assert metrics.prompt_tps is not None and metrics.prompt_tps <= usage.prompt_tokens / delay


async def test_a_held_back_tool_call_uses_the_backends_first_token_time() -> None:
    import asyncio

    from desktop_app.core.agent.metrics import collect_call_timings, timed
    from desktop_app.core.llm.types import StreamChunk, ToolCall, Usage

    async def tool_call_stream():
        # 1 s of generation, but the call is only sent once complete (as the local adapter
        # does): the backend says its first token came after 0.25 s.
        await asyncio.sleep(0.3)
        yield StreamChunk(usage=Usage.of(400, 31), finish_reason="tool_calls",
                          tool_calls=[ToolCall(id="c", name="calculator", arguments="{}")],
                          first_token_s=0.1)

    async def hosted_tool_call():
        await asyncio.sleep(0.05)
        yield StreamChunk(usage=Usage.of(400, 31), tool_calls=[
            ToolCall(id="c", name="calculator", arguments="{}")])

    with collect_call_timings() as calls:
        async for _ in timed(tool_call_stream()):
            pass
        async for _ in timed(hosted_tool_call()):
            pass
    local, hosted = calls
    assert local.first_chunk is not None
    assert abs((local.first_chunk - local.started) - 0.1) < 1e-6
    metrics = summarize(calls, started=0.0, first_answer_at=None)
    # 30 tokens in ~0.2 s of writing: about 150 tok/s at most, never thousands.
    assert metrics.output_tps is not None and metrics.output_tps < 200
    assert hosted.first_chunk is None  # no text, no measured time: no sample
