"""Compare: one prompt, several models, side by side (SPEC §9).

Each model gets its own fresh agent over the same tools and the same prompt, and is measured
from the outside through the run's events: time to first answer token, total time, tokens,
tokens per second, tool calls, and the answer. Local models run one after another (they share
the CPU; running them together would make each look slower than it is); remote models run
concurrently with each other and with the local queue.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from desktop_app.core.agent.events import AnswerDelta, Event, IterationStart
from desktop_app.core.agent.react import ReActAgent
from desktop_app.core.agent.runner import drive_run
from desktop_app.core.llm.base import LLM
from desktop_app.core.llm.types import RunMetrics, Usage


@dataclass
class CompareTarget:
    """One contestant: a display name, its model, and whether it runs on this machine."""

    name: str
    llm: LLM
    local: bool = False


@dataclass
class CompareRow:
    """What one model did with the prompt."""

    name: str
    model_id: str
    answer: str = ""
    ttft: float | None = None
    elapsed: float = 0.0
    usage: Usage = field(default_factory=Usage)
    tool_calls: int = 0
    iterations: int = 0
    error: str | None = None
    #: The model's own reading and writing speed, measured per call (``agent/metrics``).
    metrics: RunMetrics = field(default_factory=RunMetrics)

    @property
    def tokens_per_second(self) -> float | None:
        """Output tokens per second while the model was writing (not over tool time)."""
        return self.metrics.output_tps

    @property
    def prompt_tokens_per_second(self) -> float | None:
        return self.metrics.prompt_tps


AgentFactory = Callable[[LLM], ReActAgent]
EventSink = Callable[[str, Event], Any]


async def run_one(target: CompareTarget, prompt: str, make_agent: AgentFactory,
                  on_event: EventSink | None = None) -> CompareRow:
    """Run ``prompt`` on one model and measure it; never raises for model errors."""
    row = CompareRow(name=target.name, model_id=target.llm.model_id)
    started = time.perf_counter()

    def emit(event: Event) -> None:
        if isinstance(event, AnswerDelta) and row.ttft is None and event.content:
            row.ttft = time.perf_counter() - started
        elif isinstance(event, IterationStart):
            row.tool_calls += 1
        if on_event is not None:
            on_event(target.name, event)

    outcome = await drive_run(make_agent(target.llm), prompt, emit=emit)
    row.elapsed = time.perf_counter() - started
    row.answer = outcome.answer
    row.usage = outcome.usage
    row.iterations = outcome.iterations
    row.error = outcome.error
    row.metrics = outcome.done.metrics or RunMetrics()
    return row


async def compare_models(prompt: str, targets: Sequence[CompareTarget], make_agent: AgentFactory,
                         *, on_event: EventSink | None = None) -> list[CompareRow]:
    """Rows in the order of ``targets``."""
    rows: dict[str, CompareRow] = {}

    async def local_queue() -> None:
        for target in (t for t in targets if t.local):
            rows[target.name] = await run_one(target, prompt, make_agent, on_event)

    async def remote(target: CompareTarget) -> None:
        rows[target.name] = await run_one(target, prompt, make_agent, on_event)

    await asyncio.gather(local_queue(), *(remote(t) for t in targets if not t.local))
    return [rows[t.name] for t in targets]


def format_table(rows: Sequence[CompareRow]) -> str:
    """A plain-text table of the measurements (answers follow it, one per model)."""
    header = ("model", "first token", "total", "tokens in/out", "prompt tok/s", "output tok/s",
              "tools", "status")
    lines = [header]
    for r in rows:
        tps, prompt_tps = r.tokens_per_second, r.prompt_tokens_per_second
        lines.append((
            r.name,
            f"{r.ttft:.2f} s" if r.ttft is not None else "–",
            f"{r.elapsed:.2f} s",
            f"{r.usage.prompt_tokens}/{r.usage.completion_tokens}",
            f"{prompt_tps:.0f}" if prompt_tps is not None else "–",
            f"{tps:.1f}" if tps is not None else "–",
            str(r.tool_calls),
            "error" if r.error else "ok",
        ))
    widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
    out = ["  ".join(cell.ljust(w) for cell, w in zip(line, widths)).rstrip() for line in lines]
    out.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(out)
