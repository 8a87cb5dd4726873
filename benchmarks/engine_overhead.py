"""Engine overhead per tool-loop iteration, with the LLM's own time taken out.

A zero-latency fake LLM answers instantly from precomputed replies; the time spent inside
its ``chat()`` is measured and subtracted, so what remains is the engine: prompt and message
bookkeeping, action parsing, argument decoding and validation, tool dispatch, events.
Setup: 20 tools (so tool selection runs), 50 iterations (49 tool calls + final answer),
an event sink that keeps every event like the UI does. Target: <= 1 ms per iteration.

    python benchmarks/engine_overhead.py [--runs N] [--mode json|native|both]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time
from collections.abc import AsyncIterator, Sequence
from typing import Any

from desktop_app.core.agent import ReActAgent
from desktop_app.core.agent.events import Event
from desktop_app.core.llm.base import LLM, ToolChoice, ToolSpec
from desktop_app.core.llm.types import (
    ChatMessage,
    LLMResult,
    StreamChunk,
    ToolCall,
    Usage,
    make_abilities,
)
from desktop_app.core.tools.base import FunctionTool, ToolRegistry, ToolResult

TOOLS = 20
ITERATIONS = 50
SELECTED = [f"tool_{i:02d}" for i in range(6)]


class ZeroLatencyLLM(LLM):
    """Answers instantly from a fixed script; records the time spent inside ``chat``."""

    def __init__(self, native: bool) -> None:
        self._abilities = make_abilities(tool_call=native, json_mode=native, streaming=True)
        self.native = native
        self.llm_time = 0.0
        self.llm_cpu = 0.0
        self.loop_calls = 0
        usage = Usage.of(100, 10)
        args = {"text": "hello", "count": 3}
        if native:
            self._action = LLMResult(message=ChatMessage.assistant(tool_calls=[ToolCall(
                id="c", name="tool_01", arguments=json.dumps(args))]), usage=usage)
            self._final = LLMResult(message=ChatMessage.assistant("done"), usage=usage)
            self._selection = LLMResult(message=ChatMessage.assistant(tool_calls=[ToolCall(
                id="s", name="select_tools", arguments=json.dumps({"tools": SELECTED}))]),
                usage=usage)
        else:
            self._action = LLMResult(message=ChatMessage.assistant(json.dumps(
                {"type": "tool_call", "tool": "tool_01", "args": args, "reasoning": "go"})),
                usage=usage)
            self._final = LLMResult(message=ChatMessage.assistant(json.dumps(
                {"type": "final_answer", "answer": "done", "reasoning": "finished"})), usage=usage)
            self._selection = LLMResult(message=ChatMessage.assistant(
                json.dumps({"tools": SELECTED})), usage=usage)

    @property
    def model_id(self) -> str:
        return "zero-latency"

    @property
    def context_size(self) -> int:
        return 1_000_000

    @property
    def abilities(self) -> dict[str, bool]:
        return self._abilities

    async def chat(self, messages: Sequence[ChatMessage], *, tools: list[ToolSpec] | None = None,
                   tool_choice: ToolChoice = None, response_format: dict[str, Any] | None = None,
                   temperature: float | None = None, max_tokens: int | None = None) -> LLMResult:
        started, cpu_started = time.perf_counter(), time.process_time()
        if tool_choice is not None or (response_format is None and "select" in
                                       messages[0].content[:40] and not self.native) or messages[0].content.startswith("You choose which tools"):
            reply = self._selection
        else:
            self.loop_calls += 1
            reply = self._final if self.loop_calls >= ITERATIONS else self._action
            # Each call asks for something new (the engine does not re-run exact repeats).
            reply = reply.model_copy(deep=True)
            if reply.message.tool_calls:
                reply.message.tool_calls[0].arguments = json.dumps(
                    {"text": f"hello {self.loop_calls}", "count": 3})
            elif reply is not self._final and not self.native:
                reply.message.content = reply.message.content.replace(
                    '"hello"', f'"hello {self.loop_calls}"')
        self.llm_time += time.perf_counter() - started
        self.llm_cpu += time.process_time() - cpu_started
        return reply

    async def stream_chat(self, messages: Sequence[ChatMessage], **_: Any) -> AsyncIterator[StreamChunk]:
        yield StreamChunk(content="done", usage=Usage.of(1, 1), finish_reason="stop")


def make_tools() -> ToolRegistry:
    async def run(text: str, count: int = 1) -> ToolResult:
        return ToolResult(text=text * count)

    schema = {"type": "object", "properties": {
        "text": {"type": "string", "description": "what to echo"},
        "count": {"type": "integer", "minimum": 1, "maximum": 10}},
        "required": ["text"], "additionalProperties": False}
    return ToolRegistry(FunctionTool(f"tool_{i:02d}", f"Echo tool number {i}", schema, run)
                        for i in range(TOOLS))


async def one_run(native: bool) -> tuple[float, float]:
    """Engine seconds per iteration for one run: wall clock and process CPU time.

    CPU time is the fairer number on a shared machine: it leaves out time this process
    spent waiting for a core."""
    llm = ZeroLatencyLLM(native)
    agent = ReActAgent(llm, make_tools(), max_iterations=ITERATIONS)
    events: list[Event] = []
    started, cpu_started = time.perf_counter(), time.process_time()
    result = await agent.run("benchmark query", on_event=events.append)
    wall, cpu = time.perf_counter() - started, time.process_time() - cpu_started
    assert result.iterations == ITERATIONS and result.selected_tools == SELECTED, result
    assert len(result.steps) == ITERATIONS - 1 and all(s.ok for s in result.steps)
    return (wall - llm.llm_time) / result.iterations, (cpu - llm.llm_cpu) / result.iterations


async def main(runs: int, modes: list[str]) -> dict[str, float]:
    medians = {}
    for mode in modes:
        await one_run(mode == "native")  # warm-up: imports, validator caches
        samples = [await one_run(mode == "native") for _ in range(runs)]
        wall = [w * 1000 for w, _ in samples]
        cpu = [c * 1000 for _, c in samples]
        medians[mode] = statistics.median(wall)
        verdict = "OK" if medians[mode] <= 1.0 else "over the 1 ms target"
        print(f"{mode:6} mode: {medians[mode]:.3f} ms/iteration wall, "
              f"{statistics.median(cpu):.3f} ms/iteration CPU (median of {runs} runs, "
              f"best wall {min(wall):.3f}; {ITERATIONS} iterations, {TOOLS} tools, "
              f"selection on) — {verdict}")
    return medians


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--mode", choices=["json", "native", "both"], default="both")
    options = parser.parse_args()
    chosen = ["json", "native"] if options.mode == "both" else [options.mode]
    asyncio.run(main(options.runs, chosen))
