"""Persisting an answer while it streams, so a crash loses at most the last second.

``StreamingAnswerWriter`` creates the assistant message in status ``streaming`` before the
first token, buffers deltas in memory (``append`` is synchronous and cheap, fine to call
for every token), and writes the text so far at least every ``flush_interval`` seconds from
a background task — also when tokens stall — and once more at the end, setting the final
status (``complete``, ``interrupted`` when the user stopped it, ``error``) with usage and
timings. If the process dies instead, the next ``open`` marks the message ``interrupted``
and it keeps everything flushed up to then.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from types import TracebackType
from typing import Self

from desktop_app.core.errors import StorageError
from desktop_app.core.llm.types import RunMetrics, Usage
from desktop_app.core.store.async_store import AsyncStore
from desktop_app.core.store.records import Message

log = logging.getLogger(__name__)

#: The longest a streamed delta stays only in memory.
DEFAULT_FLUSH_INTERVAL = 1.0


class StreamingAnswerWriter:
    """Incrementally stores one streamed assistant answer.

    Use as ``async with StreamingAnswerWriter(store, conv_id) as w: w.append(delta)``; leaving
    the block normally completes the message, cancellation (Stop) marks it ``interrupted``
    and an exception marks it ``error`` (the text so far is kept either way).
    """

    def __init__(self, store: AsyncStore, conversation_id: str, *, model: str | None = None,
                 flush_interval: float = DEFAULT_FLUSH_INTERVAL,
                 started_at: float | None = None,
                 on_flush: Callable[[str], None] | None = None) -> None:
        self.store = store
        self.conversation_id = conversation_id
        self.model = model
        self.flush_interval = flush_interval
        #: ``time.monotonic()`` of the request, for time-to-first-token (default: ``start()``).
        self.started_at = started_at
        self.on_flush = on_flush
        self.message_id: int | None = None
        #: The text as durably stored by the last flush.
        self.flushed_content = ""
        self._content: list[str] = []
        self._reasoning: list[str] = []
        self._deltas = 0
        self._dirty = False
        self._first_token_at: float | None = None
        self._lock = asyncio.Lock()
        self._flusher: asyncio.Task[None] | None = None
        self._finished = False
        #: The last failed periodic save (None once saving works).
        self.last_error: StorageError | None = None

    @property
    def content(self) -> str:
        return "".join(self._content)

    @property
    def reasoning(self) -> str:
        return "".join(self._reasoning)

    async def start(self) -> Message:
        """Create the (empty, ``streaming``) message and start the periodic flusher."""
        if self.started_at is None:
            self.started_at = time.monotonic()
        message = await self.store.add_message(self.conversation_id, "assistant", "",
                                               status="streaming", model=self.model)
        self.message_id = message.id
        self._flusher = asyncio.create_task(self._flush_periodically(),
                                            name=f"answer-flusher-{message.id}")
        return message

    def append(self, content: str = "", reasoning: str = "") -> None:
        """Buffer one streamed delta (written by the next flush)."""
        if not content and not reasoning:
            return
        if self._first_token_at is None:
            self._first_token_at = time.monotonic()
        if content:
            self._content.append(content)
        if reasoning:
            self._reasoning.append(reasoning)
        self._deltas += 1
        self._dirty = True

    async def flush(self) -> None:
        """Write the text so far now (no-op when nothing changed)."""
        async with self._lock:
            if not self._dirty or self.message_id is None:
                return
            self._dirty = False
            content, reasoning = self.content, self.reasoning
            await self.store.update_message(self.message_id, content=content,
                                            reasoning=reasoning or None)
            self.flushed_content = content
            self.last_error = None
        if self.on_flush is not None:
            self.on_flush(content)

    async def finish(self, *, status: str = "complete", usage: Usage | None = None,
                     error: str | None = None, metrics: RunMetrics | None = None,
                     iterations: int | None = None, cut: str | None = None) -> Message:
        """Final write: full text, status, usage and timings (``cut``: why the text was
        cut short, if it was).

        ``metrics`` (the run's measured speeds) replace the writer's own estimate, which can
        only divide the run's tokens by its time after the first word.

        Raises ``StorageError`` if it cannot be saved; calling it again retries. Once it
        succeeded, further calls only return the stored message.
        """
        if self.message_id is None:
            raise RuntimeError("StreamingAnswerWriter.finish() before start()")
        if self._flusher is not None:
            self._flusher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._flusher
        if not self._finished:
            now = time.monotonic()
            start = self.started_at if self.started_at is not None else now
            ttft = self._first_token_at - start if self._first_token_at is not None else None
            elapsed = now - start
            tokens = usage.completion_tokens if usage and usage.completion_tokens else self._deltas
            gen_time = elapsed - (ttft or 0.0)
            tps = tokens / gen_time if tokens and gen_time > 0 else None
            prompt_tps = None
            if metrics is not None:
                ttft = metrics.ttft if metrics.ttft is not None else ttft
                tps, prompt_tps = metrics.output_tps, metrics.prompt_tps
            async with self._lock:
                await self.store.update_message(
                    self.message_id, content=self.content, reasoning=self.reasoning or None,
                    status=status, error=error, ttft=ttft, elapsed=elapsed,
                    tokens_per_second=tps, prompt_tokens_per_second=prompt_tps,
                    iterations=iterations, cut=cut,
                    prompt_tokens=usage.prompt_tokens if usage else None,
                    completion_tokens=usage.completion_tokens if usage else None)
                self.flushed_content = self.content
                self._dirty = False
            self._finished = True  # only once it is saved: a failed finish can be retried
        return await self.store.get_message(self.message_id)

    async def _flush_periodically(self) -> None:
        while True:
            await asyncio.sleep(self.flush_interval)
            try:
                await self.flush()
            except StorageError as exc:
                # Keep streaming (the text is still in memory and on screen) and retry at
                # the next tick; finish() reports the problem if it persists.
                self.last_error = exc
                self._dirty = True
                log.warning("could not save the streaming answer: %s", exc)

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        if exc_type is None:
            await self.finish()
        elif issubclass(exc_type, (asyncio.CancelledError, KeyboardInterrupt)):
            # Shielded: the final write must land even though our task is being cancelled.
            await asyncio.shield(self.finish(status="interrupted"))
        else:
            await asyncio.shield(self.finish(status="error", error=str(exc)))
