"""The run event protocol (SPEC §8), defined in ``desktop_app.core.events.run`` at the
bottom of ``core`` so the store and the context guard import it without importing the
agent; re-exported here for the engine's modules."""

from __future__ import annotations

from desktop_app.core.events.run import (
    AnswerDelta,
    AnswerDone,
    AnswerSignal,
    AnswerStart,
    Compact,
    Confirm,
    Done,
    ErrorEvent,
    Event,
    Inject,
    IterationDone,
    IterationStart,
    Notice,
    Phase,
    ThinkingDone,
    ThinkingStart,
    encode_sse,
)

__all__ = [
    "AnswerDelta",
    "AnswerDone",
    "AnswerSignal",
    "AnswerStart",
    "Compact",
    "Confirm",
    "Done",
    "ErrorEvent",
    "Event",
    "Inject",
    "IterationDone",
    "IterationStart",
    "Notice",
    "Phase",
    "ThinkingDone",
    "ThinkingStart",
    "encode_sse",
]
