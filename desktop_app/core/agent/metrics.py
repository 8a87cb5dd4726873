"""Honest speed numbers for one run: time to the first answer word, prompt and output speed.

Dividing a run's output tokens by its whole duration (tool loop, tool time and all) gives a
"tok/s" that is neither the model's reading nor its writing speed. Here every streamed
model call is timed where the agent makes it: from the request to its first chunk (the
prompt is being read; for a hosted model this includes the network) and from the first
chunk to the last (tokens are being written). Calls that are not streamed cannot be split
so, and only count towards the run's duration.

The calls of a run are collected through a context variable, so the CLI, the window,
Compare and the evaluation all get the same numbers without passing a meter around.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import AsyncIterator, Iterator
from contextvars import ContextVar
from dataclasses import dataclass

from desktop_app.core.llm.types import RunMetrics, StreamChunk

__all__ = ["CallTiming", "RunClock", "RunMetrics", "collect_call_timings", "summarize",
           "timed"]


@dataclass(slots=True)
class CallTiming:
    """One streamed model call."""

    started: float
    first_chunk: float | None = None
    ended: float | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0


_calls: ContextVar[list[CallTiming] | None] = ContextVar("desktop_app_call_timings",
                                                         default=None)


@contextlib.contextmanager
def collect_call_timings() -> Iterator[list[CallTiming]]:
    """Every streamed call made inside the block (in this task) is appended to the list."""
    calls: list[CallTiming] = []
    token = _calls.set(calls)
    try:
        yield calls
    finally:
        _calls.reset(token)


class RunClock:
    """One run's start, its first visible answer text and its streamed calls: what
    ``Done.metrics`` reports, for the ReAct driver and the DAG runner alike."""

    def __init__(self, started: float | None = None) -> None:
        #: ``time.perf_counter()`` when the person asked (Send): the first word and the
        #: total count from there, loading the model included.
        self.started = time.perf_counter() if started is None else started
        self.first_answer_at: float | None = None
        self.calls: list[CallTiming] = []

    @contextlib.contextmanager
    def measuring(self) -> Iterator[RunClock]:
        """Collect the calls made inside the block (in this task) into ``calls``."""
        with collect_call_timings() as calls:
            self.calls = calls
            yield self

    def answer_text(self, text: str) -> None:
        """Text went to the user; the first that is not blank is the first answer word."""
        if self.first_answer_at is None and text.strip():
            self.first_answer_at = time.perf_counter()

    def metrics(self) -> RunMetrics:
        return summarize(self.calls, started=self.started, first_answer_at=self.first_answer_at)


async def timed(stream: AsyncIterator[StreamChunk]) -> AsyncIterator[StreamChunk]:
    """``stream``, passed through, with its timing recorded for the current run (if any)."""
    calls = _calls.get()
    timing = CallTiming(started=time.perf_counter())
    if calls is not None:
        calls.append(timing)
    try:
        measured: float | None = None
        async for chunk in stream:
            if timing.first_chunk is None and (chunk.content or chunk.reasoning):
                timing.first_chunk = time.perf_counter()
            if chunk.first_token_s is not None:
                measured = chunk.first_token_s
            if chunk.usage is not None:
                timing.prompt_tokens = chunk.usage.prompt_tokens
                timing.completion_tokens = chunk.usage.completion_tokens
            yield chunk
        if measured is not None:
            # The backend's own clock: right also when the text was held back (tool calls).
            timing.first_chunk = timing.started + measured
        # A call that showed no text and has no measured first token (a hosted model's tool
        # call) says nothing about reading or writing speed: it gives no sample.
    finally:
        timing.ended = time.perf_counter()
        aclose = getattr(stream, "aclose", None)
        if aclose is not None:
            await aclose()  # a local model stops generating when its consumer stops


def summarize(calls: list[CallTiming], *, started: float,
              first_answer_at: float | None) -> RunMetrics:
    """The run's metrics from its calls (see the module docstring for what each means)."""
    reading = [(c.prompt_tokens, c.first_chunk - c.started) for c in calls
               if c.first_chunk is not None and c.prompt_tokens]
    writing = [(c.completion_tokens, c.ended - c.first_chunk) for c in calls
               if c.first_chunk is not None and c.ended is not None and c.completion_tokens > 1]
    return RunMetrics(
        ttft=round(first_answer_at - started, 4) if first_answer_at is not None else None,
        prompt_tps=_rate(reading),
        # The first token arrives with the first chunk: the others took the writing time.
        output_tps=_rate([(tokens - 1, seconds) for tokens, seconds in writing]))


def _rate(samples: list[tuple[int, float]]) -> float | None:
    tokens = sum(n for n, _ in samples)
    seconds = sum(s for _, s in samples)
    return round(tokens / seconds, 2) if tokens and seconds > 0 else None
