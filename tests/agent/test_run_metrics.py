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
