"""What a tool loop produces: ``StepRecord`` per tool call and the ``AgentResult`` of a run."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from desktop_app.core.llm.types import ChatMessage, Usage
from desktop_app.core.tools.base import Artifact

#: Why the tool loop ended.
StopReason = Literal["final_answer", "unparsed_answer", "max_iterations"]
#: Why the answer's text ended before the model finished it: the output-length limit, or
#: the repetition guard (a model fallen into a loop).
AnswerCut = Literal["length", "repetition"]


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
    #: The tool may have changed something (it is not read-only).
    changed_something: bool = False
    #: The tool's own words for the user when this call was the request (not persisted).
    confirmation: str | None = None
    #: The user declined the call when asked: nothing ran (not persisted).
    declined: bool = False
    #: The tool only computed a value from its arguments (``Tool.pure``; not persisted).
    computed: bool = False

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def made_something(self) -> bool:
        """It succeeded and made or changed something (an artifact, a note, a file)."""
        return self.ok and (self.changed_something or bool(self.artifacts))

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
    #: The answer's text was cut (None: the model ended it).
    answer_cut: AnswerCut | None = None
    #: Every user interrupt received during the run, in arrival order.
    interrupts: list[str] = field(default_factory=list)
    #: Tool names chosen by tool selection; None when selection did not run or fell back.
    selected_tools: list[str] | None = None
    synthesis_usage: Usage | None = None
    #: Answer text the loop already streamed to the user while it was generated.
    streamed: str = ""
    #: The loop's final answer is that streamed text: synthesis must not write it again.
    answer_streamed: bool = False
    #: The tool specs of the loop's last call (a prefix-sharing synthesis repeats them).
    loop_tools: list[dict[str, Any]] | None = None

    @property
    def artifacts(self) -> list[Artifact]:
        """All artifacts of all steps, in order."""
        return [artifact for step in self.steps for artifact in step.artifacts]


def _canonical(args: Any) -> str:
    if isinstance(args, str):
        text = args.strip()
        try:
            args = json.loads(args) if text else {}
        except ValueError:
            return text
    return json.dumps(args, sort_keys=True, ensure_ascii=False)


_NUMBER_ONLY = re.compile(r"^\s*[-+]?\d[\d,]*(\.\d+)?\s*$")


def find_repeat(steps: list[StepRecord], tool: str, args: Any, *,
                read_only: bool = True,
                required: Sequence[str] | None = None) -> StepRecord | None:
    """The earlier step this call merely repeats, if any.

    Small models loop: they call again with exactly the same arguments, or "compute" the
    number they were just given (``calculator("60.7")``). A read-only call repeats an
    earlier identical one as long as no tool that changes things ran in between (reading a
    file again after writing it is meant); any call repeats one of the previous iteration.
    A call that failed repeats too when made again right away with the same arguments: the
    bundled model sent ``date_calc(end_date="2026-11-90")`` five times, getting the same
    error each time (41 s for nothing). Timeouts are the exception: a retry may succeed.
    For a tool that changes things, the same ``required`` arguments make a repeat even when
    optional ones differ: the same note saved again with other tags is not new work.
    """
    if not steps:
        return None
    wanted = _canonical(args)
    decoded = args if isinstance(args, dict) else _loads(args) if isinstance(args, str) else None
    if isinstance(decoded, dict) and len(decoded) == 1 and read_only:
        (value,) = decoded.values()
        if isinstance(value, str) and _NUMBER_ONLY.match(value):
            return steps[-1]  # a bare number to compute: nothing left to do, the model is done
    required_keys: Sequence[str] = required or ()
    last_iteration = steps[-1].iteration
    for step in reversed(steps):
        if not read_only and step.iteration != last_iteration:
            break
        same = _canonical(step.args) == wanted or (
            not read_only and bool(required_keys)
            and _required_part(step.args, required_keys) == _required_part(args, required_keys))
        if step.tool == tool and same and (
                step.error is None
                or (step.iteration == last_iteration and not _timed_out(step.error))):
            return step
        if step.changed_something:
            break
    return None


def _required_part(args: Any, required: Sequence[str]) -> str | None:
    value = args
    if isinstance(args, str):
        try:
            value = json.loads(args)
        except ValueError:
            return None
    if not isinstance(value, dict) or any(key not in value for key in required):
        return None
    return _canonical({key: value[key] for key in required})


def _timed_out(error: str) -> bool:
    lowered = error.lower()
    return "timed out" in lowered or "timeout" in lowered or "did not finish" in lowered


def _loads(text: str) -> dict[str, Any] | None:
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def draft_from_steps(steps: list[StepRecord], limit: int = 2_000) -> str:
    """A plain answer made of the last tool results, for when synthesis cannot write one."""
    good = [s for s in steps if s.error is None and s.observation.strip()]
    if not good:
        return ""
    last_iteration = good[-1].iteration
    texts = [s.observation.strip() for s in good if s.iteration == last_iteration]
    text = "\n\n".join(texts)
    return text if len(text) <= limit else text[:limit] + "…"


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
