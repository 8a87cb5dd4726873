"""Persisting one run's events: tool steps, artifacts, interrupts, the streamed answer.

``record(event)`` is synchronous (it is called from the event stream and must not slow it
down); it schedules store writes as tasks. The store runs writes on one thread in the order
they were submitted, and tasks start in creation order, so rows land in event order. The
streaming answer is saved at most once a second, and completely at ``Done``: a crash loses
at most a second of text, and the store marks such an answer ``interrupted`` on next start.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

from desktop_app.core.agent.events import (
    AnswerDelta,
    Done,
    Event,
    Inject,
    IterationDone,
    IterationStart,
)
from desktop_app.core.store.async_store import AsyncStore

log = logging.getLogger(__name__)

#: Save the streaming answer at most this often (seconds).
SAVE_INTERVAL = 1.0


class RunRecorder:
    """Writes one run's events to the store, as they happen."""

    def __init__(self, store: AsyncStore, conversation_id: str, message_id: int,
                 started: float) -> None:
        self.store = store
        self.conversation_id = conversation_id
        self.message_id = message_id
        self.started = started
        self.answer = ""
        self.ttft: float | None = None
        self._last_save = 0.0
        self._tasks: list[asyncio.Task[Any]] = []
        self._steps: dict[tuple[Any, ...], asyncio.Task[Any]] = {}
        #: (interrupt id, text) of interrupts sent into this run.
        self.interrupts: list[tuple[int, str]] = []
        #: interrupt id -> id of its stored (pinned user) message.
        self.interrupt_messages: dict[int, int] = {}
        self._injected: list[str] = []
        #: Failures of background writes, reported instead of lost.
        self.errors: list[str] = []

    def _spawn(self, coro: Any) -> asyncio.Task[Any]:
        task = asyncio.ensure_future(coro)
        self._tasks.append(task)
        task.add_done_callback(self._check)
        return task

    def _check(self, task: asyncio.Task[Any]) -> None:
        if not task.cancelled() and task.exception() is not None:
            log.error("saving the run failed: %s", task.exception())
            self.errors.append(str(task.exception()))

    @staticmethod
    def _key(event: IterationStart | IterationDone) -> tuple[Any, ...]:
        return (event.call_id,) if event.call_id else (event.iteration, event.tool_name)

    def record(self, event: Event) -> None:
        """Schedule the writes ``event`` calls for."""
        if isinstance(event, AnswerDelta):
            if self.ttft is None:
                self.ttft = time.perf_counter() - self.started
            self.answer += event.content
            now = time.monotonic()
            if now - self._last_save >= SAVE_INTERVAL:
                self._last_save = now
                self._spawn(self.store.update_message(self.message_id, content=self.answer))
        elif isinstance(event, IterationStart):
            args = event.tool_args if event.tool_args is not None else {}
            self._steps[self._key(event)] = self._spawn(self.store.add_tool_step(
                self.message_id, event.iteration, event.tool_name, args))
        elif isinstance(event, IterationDone):
            step = self._steps.pop(self._key(event), None)
            self._spawn(self._finish_step(step, event))
        elif isinstance(event, Inject):
            self._injected.append(event.content)
            ids = [i for i, text in self.interrupts if text.strip() in event.content]
            if ids:
                self._spawn(self.store.mark_interrupts_delivered(ids))
        elif isinstance(event, Done):
            self._spawn(self._finish(event))

    async def _finish_step(self, step_task: asyncio.Task[Any] | None, event: IterationDone) -> None:
        if step_task is not None:
            step = await step_task
        else:
            step = await self.store.add_tool_step(self.message_id, event.iteration,
                                                  event.tool_name, {})
        await self.store.update_tool_step(step.id, observation=event.observation,
                                          error=event.error, elapsed=event.iter_elapsed)
        for artifact in event.artifacts:
            await self.store.add_artifact(self.conversation_id, artifact.name,
                                          artifact.mime_type, artifact.content,
                                          message_id=self.message_id, step_id=step.id)

    async def _finish(self, done: Done) -> None:
        content = self.answer or done.answer
        status = "interrupted" if done.cancelled else ("error" if done.error else "complete")
        speed = (done.usage.completion_tokens / done.elapsed
                 if done.elapsed > 0 and done.usage.completion_tokens else None)
        await self.store.update_message(
            self.message_id, content=content, status=status, model=done.model,
            prompt_tokens=done.usage.prompt_tokens, completion_tokens=done.usage.completion_tokens,
            elapsed=done.elapsed, ttft=self.ttft, tokens_per_second=speed, error=done.error)

    async def add_interrupt(self, text: str, run_message_id: int) -> None:
        interrupt = await self.store.add_interrupt(self.conversation_id, text,
                                                   run_message_id=run_message_id)
        self.interrupts.append((interrupt.id, text))
        self.interrupt_messages[interrupt.id] = interrupt.message_id
        if any(text.strip() in injected for injected in self._injected):
            # The engine took it before the write finished.
            await self.store.mark_interrupts_delivered([interrupt.id])

    async def flush(self) -> None:
        """Wait for every scheduled write (the run is over)."""
        while self._tasks:
            tasks, self._tasks = self._tasks, []
            await asyncio.gather(*tasks, return_exceptions=True)
