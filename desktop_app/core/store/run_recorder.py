"""Recording one agent run into the store, straight from its event stream.

The UI and the CLI pass a ``RunRecorder`` as the ``emit`` callback of ``drive_run`` (or feed
it the events they receive). Order of durability, so a crash at any point loses nothing
the user saw:

1. ``begin(query)``: the user's message is committed *before* the run starts, and the
   assistant message is created right away in status ``streaming`` (tool steps attach to it);
2. every tool step is stored when it starts and completed when it finishes, with artifacts;
3. answer deltas go through a ``StreamingAnswerWriter`` (flushed at least every second);
4. ``Done`` writes the final text, usage, timings and status (``complete``, ``error`` or
   ``interrupted`` for a cancelled run).

Follow-ups the user sends during the run are stored at once with ``interrupt(text)``
(pending); the ``Inject`` event marks them delivered.
"""

from __future__ import annotations

import json
import time
from typing import Any

from desktop_app.core.events.dag import (
    DagAnalysis,
    DagPlan,
    DagReplan,
    DagStepDone,
    DagStepProgress,
    DagStepStart,
    step_tool_event,
)
from desktop_app.core.events.run import (
    AnswerDelta,
    Done,
    ErrorEvent,
    Event,
    Inject,
    IterationDone,
    IterationStart,
    ThinkingDone,
)
from desktop_app.core.store.async_store import AsyncStore
from desktop_app.core.store.records import Interrupt, Message
from desktop_app.core.store.streaming import DEFAULT_FLUSH_INTERVAL, StreamingAnswerWriter

#: The DAG events a reopened answer replays: its plan card and check lines.
PLAN_EVENTS = (DagPlan, DagStepStart, DagStepDone, DagAnalysis, DagReplan)


class RunRecorder:
    """Persists one run of one conversation; use it as ``drive_run(..., emit=recorder)``."""

    def __init__(self, store: AsyncStore, conversation_id: str, *, model: str | None = None,
                 flush_interval: float = DEFAULT_FLUSH_INTERVAL) -> None:
        self.store = store
        self.conversation_id = conversation_id
        self.model = model
        self.writer = StreamingAnswerWriter(store, conversation_id, model=model,
                                            flush_interval=flush_interval)
        self.user_message: Message | None = None
        self.answer: Message | None = None
        self._steps: dict[tuple[int, str | None, str], int] = {}
        self._pending: list[Interrupt] = []
        self._error: str | None = None
        self._plan: list[dict[str, Any]] = []

    async def begin(self, query: str) -> Message:
        """Store the user's message (committed before this returns) and open the answer."""
        self.writer.started_at = time.monotonic()
        self.user_message = await self.store.add_message(self.conversation_id, "user", query)
        await self.writer.start()
        return self.user_message

    async def interrupt(self, text: str) -> Interrupt:
        """Store a follow-up the user sent while this run works (before the engine sees it)."""
        run_id = self.user_message.id if self.user_message is not None else None
        record = await self.store.add_interrupt(self.conversation_id, text,
                                                run_message_id=run_id)
        self._pending.append(record)
        return record

    async def __call__(self, event: Event) -> None:
        """Record one event (the ``emit``/``on_event`` callback)."""
        message_id = self.writer.message_id
        if message_id is None:
            raise RuntimeError("RunRecorder: call begin(query) before the run emits events")
        if isinstance(event, PLAN_EVENTS):
            self._plan.append({"kind": type(event).__name__, "data": event.model_dump()})
        if isinstance(event, DagStepProgress):
            inner = step_tool_event(event)  # a DAG step's tool call: kept like a ReAct one
            if inner is None:
                return
            event = inner
        if isinstance(event, ThinkingDone) and event.reasoning:
            self.writer.append(reasoning=("\n\n" if self.writer.reasoning else "")
                               + event.reasoning)
        elif isinstance(event, IterationStart):
            step = await self.store.add_tool_step(message_id, event.iteration, event.tool_name,
                                                  event.tool_args)
            self._steps[(event.iteration, event.call_id, event.tool_name)] = step.id
        elif isinstance(event, IterationDone):
            await self._tool_done(message_id, event)
        elif isinstance(event, AnswerDelta):
            self.writer.append(event.content)
        elif isinstance(event, Inject):
            delivered = [i for i in self._pending if i.content == event.content][:1]
            if delivered:
                self._pending.remove(delivered[0])
                await self.store.mark_interrupts_delivered([delivered[0].id])
        elif isinstance(event, ErrorEvent):
            self._error = event.message
        elif isinstance(event, Done):
            await self._done(event)

    async def _tool_done(self, message_id: int, event: IterationDone) -> None:
        key = (event.iteration, event.call_id, event.tool_name)
        step_id = self._steps.pop(key, None)
        if step_id is None:  # no start event seen (or a duplicate): still keep the result
            step = await self.store.add_tool_step(
                message_id, event.iteration, event.tool_name, None,
                observation=event.observation, error=event.error, elapsed=event.iter_elapsed)
            step_id = step.id
        else:
            await self.store.update_tool_step(step_id, observation=event.observation,
                                              error=event.error, elapsed=event.iter_elapsed)
        for artifact in event.artifacts:
            await self.store.add_artifact(self.conversation_id, artifact.name,
                                          artifact.mime_type, artifact.content,
                                          message_id=message_id, step_id=step_id)

    async def _done(self, event: Done) -> None:
        if self._plan and self.writer.message_id is not None:
            await self.store.update_message(self.writer.message_id,
                                            plan=json.dumps(self._plan, ensure_ascii=False))
        if not self.writer.content and event.answer:
            self.writer.append(event.answer)  # a run that answered without streaming
        status = "interrupted" if event.cancelled else "error" if event.error else "complete"
        if event.model and event.model != self.model:
            await self.store.update_message(self.writer.message_id or 0, model=event.model)
        self.answer = await self.writer.finish(status=status, usage=event.usage,
                                               error=event.error or None,
                                               metrics=event.metrics,
                                               iterations=event.iterations,
                                               cut=event.cut)

    async def abort(self, status: str = "interrupted", error: Any = None) -> None:
        """Close the answer if the run ended without a ``Done`` event (should not happen)."""
        if self.answer is None and self.writer.message_id is not None:
            self.answer = await self.writer.finish(status=status,
                                                   error=str(error) if error else self._error)
