"""What a tool loop produces: ``StepRecord`` per tool call and the ``AgentResult`` of a run."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from desktop_app.core.llm.types import ChatMessage, Usage
from desktop_app.core.tools.base import Artifact

#: Why the tool loop ended.
StopReason = Literal["final_answer", "unparsed_answer", "max_iterations"]


@dataclass(slots=True)
class StepRecord:
    """One tool call: what was asked, what the model saw back, how long it took.

    ``observation`` is the text the LLM saw (artifact sources replaced by a summary);
    ``artifacts`` keep the full documents for the UI and the store.
    """

    tool: str
    args: Any
    observation: str
    error: str | None
    elapsed: float
    artifacts: list[Artifact] = field(default_factory=list)
    iteration: int = 0
    call_id: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready form (for persistence and exports)."""
        return {"tool": self.tool, "args": self.args, "observation": self.observation,
                "error": self.error, "elapsed": self.elapsed, "iteration": self.iteration,
                "call_id": self.call_id,
                "artifacts": [a.model_dump() for a in self.artifacts]}


@dataclass
class AgentResult:
    """The outcome of ``ReActAgent.run``.

    ``answer`` is the brief text of the last iteration (the fallback when synthesis fails);
    ``messages`` is the full history: system prompt, history, query, every assistant message
    and every tool result, interrupts included. ``usage`` sums every call of the run
    (selection, compaction, loop, and synthesis once ``stream_answer`` has finished).
    """

    answer: str
    steps: list[StepRecord]
    iterations: int
    usage: Usage
    messages: list[ChatMessage]
    model: str = ""
    query: str = ""
    mode: Literal["json", "native"] = "json"
    stop_reason: StopReason = "final_answer"
    #: Every user interrupt received during the run, in arrival order.
    interrupts: list[str] = field(default_factory=list)
    #: Tool names chosen by tool selection; None when selection did not run or fell back.
    selected_tools: list[str] | None = None
    synthesis_usage: Usage | None = None

    @property
    def artifacts(self) -> list[Artifact]:
        """All artifacts of all steps, in order."""
        return [artifact for step in self.steps for artifact in step.artifacts]


def attach_partial_result(exc: BaseException, result: AgentResult) -> None:
    """Remember how far a failed run got, so the driver can still report iterations/usage."""
    try:
        exc.partial_result = result  # type: ignore[attr-defined]
    except AttributeError:  # exceptions with __slots__: nothing to attach to
        pass


def partial_result(exc: BaseException) -> AgentResult | None:
    """The partial ``AgentResult`` a failed or cancelled run attached to ``exc``, if any."""
    value = getattr(exc, "partial_result", None)
    return value if isinstance(value, AgentResult) else None
