"""The event protocol a run emits (SPEC §8). Typed models that serialise 1:1 to SSE.

Each model's ``channel`` is the SSE ``event:`` name; its fields are the ``data:`` payload.
Optional fields beyond the SPEC table (``call_id``, ``artifacts``, ``model``...) only add
information; the SPEC keys are always present.
"""

from __future__ import annotations

import json
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from desktop_app.core.llm.types import RunMetrics, Usage
from desktop_app.core.tools.base import Artifact


class Event(BaseModel):
    """Base of all run events."""

    model_config = ConfigDict(frozen=True)
    channel: ClassVar[str]

    def payload(self) -> dict[str, Any]:
        return self.model_dump(mode="json")


class ThinkingStart(Event):
    channel: ClassVar[str] = "step"
    type: Literal["thinking"] = "thinking"
    status: Literal["start"] = "start"
    iteration: int


class ThinkingDone(Event):
    channel: ClassVar[str] = "step"
    type: Literal["thinking"] = "thinking"
    status: Literal["done"] = "done"
    iteration: int
    reasoning: str = ""


class IterationStart(Event):
    channel: ClassVar[str] = "step"
    type: Literal["iteration"] = "iteration"
    status: Literal["start"] = "start"
    iteration: int
    tool_name: str
    tool_args: Any = None
    call_id: str | None = None
    #: "model": the model chose this call; "policy": a small-model policy made it for it.
    origin: Literal["model", "policy"] = "model"


class IterationDone(Event):
    channel: ClassVar[str] = "step"
    type: Literal["iteration"] = "iteration"
    status: Literal["done"] = "done"
    iteration: int
    tool_name: str
    observation: str = ""
    error: str | None = None
    iter_elapsed: float = 0.0
    call_id: str | None = None
    artifacts: list[Artifact] = Field(default_factory=list)


class AnswerSignal(Event):
    """The agent signalled final_answer (end of the tool loop)."""

    channel: ClassVar[str] = "step"
    type: Literal["answer"] = "answer"
    status: Literal["start"] = "start"


class AnswerStart(Event):
    channel: ClassVar[str] = "answer"
    status: Literal["start"] = "start"


class AnswerDelta(Event):
    channel: ClassVar[str] = "answer"
    status: Literal["delta"] = "delta"
    content: str


class AnswerDone(Event):
    channel: ClassVar[str] = "answer"
    status: Literal["done"] = "done"


class Compact(Event):
    channel: ClassVar[str] = "compact"
    original_messages: int
    kept_messages: int
    #: Set when the user's own message had to be cut to fit the model's context window:
    #: its size in tokens before and after (the user must be told).
    question_tokens: int | None = None
    question_kept_tokens: int | None = None

    def payload(self) -> dict[str, Any]:
        # SPEC §8's payload is unchanged unless the question really was cut.
        return self.model_dump(mode="json", exclude_none=True)


class Phase(Event):
    channel: ClassVar[str] = "phase"
    phase: str
    total_tools: int | None = None


class Inject(Event):
    channel: ClassVar[str] = "inject"
    type: Literal["inject"] = "inject"
    content: str


class Confirm(Event):
    """A tool that changes something asks the user first; answer via the run's confirmer."""

    channel: ClassVar[str] = "confirm"
    type: Literal["confirm"] = "confirm"
    request_id: str
    tool_name: str
    tool_args: Any = None
    #: What the call would change, in the user's words (``Tool.describe_change``).
    change: str | None = None
    #: It destroys something (a file's content): "always allow" does not cover it.
    destroys: bool = False
    #: "run": may the tool run; "share": may the user's own content go to the model's
    #: computer (``change`` says what and where; the answer holds for the conversation).
    kind: Literal["run", "share"] = "run"


class ErrorEvent(Event):
    """Something failed; ``message`` says what and what to do. ``done`` still follows."""

    channel: ClassVar[str] = "error"
    message: str
    kind: str = "error"


class Notice(Event):
    """Something the user should know that is not a failure (the run goes on), e.g. that a
    model refused tool definitions and now uses JSON mode."""

    channel: ClassVar[str] = "notice"
    message: str


class Done(Event):
    channel: ClassVar[str] = "done"
    answer: str
    iterations: int
    usage: Usage
    elapsed: float
    model: str | None = None
    error: str | None = None
    cancelled: bool = False
    #: The answer was cut: "length" (the output limit) or "repetition" (a loop was stopped).
    cut: str | None = None
    #: Time to the first answer word, prompt and output speed (see ``agent/metrics.py``).
    metrics: RunMetrics | None = None


def encode_sse(event: Event) -> str:
    """``event: <channel>`` / ``data: <json>`` lines, terminated by a blank line."""
    data = json.dumps(event.payload(), ensure_ascii=False, separators=(",", ":"))
    return f"event: {event.channel}\ndata: {data}\n\n"
