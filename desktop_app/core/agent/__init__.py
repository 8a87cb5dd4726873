"""The agent engine: ReActAgent (tool loop + synthesis), interrupts, events and run driver."""

from desktop_app.core.agent.events import (
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
from desktop_app.core.agent.guard import CompactionResultLike, ContextGuardLike
from desktop_app.core.agent.interrupts import InterruptQueue, InterruptQueues, interrupt_message
from desktop_app.core.agent.react import ReActAgent
from desktop_app.core.agent.result import AgentResult, StepRecord, partial_result
from desktop_app.core.agent.runner import RunOutcome, drive_run, iter_run
from desktop_app.core.agent.selection import TOOL_SELECTION_THRESHOLD
from desktop_app.core.agent.tool_exec import Confirmer

__all__ = [
    "TOOL_SELECTION_THRESHOLD",
    "AgentResult",
    "AnswerDelta",
    "AnswerDone",
    "AnswerSignal",
    "AnswerStart",
    "Compact",
    "CompactionResultLike",
    "Confirm",
    "Confirmer",
    "ContextGuardLike",
    "Done",
    "ErrorEvent",
    "Event",
    "Inject",
    "InterruptQueue",
    "InterruptQueues",
    "IterationDone",
    "IterationStart",
    "Notice",
    "Phase",
    "ReActAgent",
    "RunOutcome",
    "StepRecord",
    "ThinkingDone",
    "ThinkingStart",
    "drive_run",
    "encode_sse",
    "interrupt_message",
    "iter_run",
    "partial_result",
]
