"""Typed records the conversation store hands out.

They are slotted dataclasses, not pydantic models: opening a conversation of 10,000
messages builds 10,000 of them, and a dataclass costs a fraction of a validated model. The
store validates on the way *in* (SQL ``CHECK`` constraints and the ``Literal`` types here),
so nothing needs re-validating on the way out. They are snapshots: treat them as read-only
(changes go through the store). They are deliberately not ``frozen``: a frozen dataclass's
``__init__`` sets each field through ``object.__setattr__``, which measured 4x slower here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

Mode = Literal["react", "dag"]
MessageRole = Literal["system", "user", "assistant", "tool"]
MessageStatus = Literal["complete", "streaming", "interrupted", "error"]
InterruptStatus = Literal["pending", "delivered"]

MODES: tuple[str, ...] = ("react", "dag")
ROLES: tuple[str, ...] = ("system", "user", "assistant", "tool")
STATUSES: tuple[str, ...] = ("complete", "streaming", "interrupted", "error")


@dataclass(slots=True)
class Conversation:
    """One chat. ``deleted_at`` is set while it sits in the trash (soft delete)."""

    id: str
    title: str
    model: str | None
    mode: Mode
    created_at: float
    updated_at: float
    pinned: bool = False
    archived: bool = False
    deleted_at: float | None = None
    message_count: int = 0
    #: The assistant preset the chat uses (None: the default one).
    assistant: str | None = None
    #: The chat's own overrides of its assistant (temperature, context_size).
    chat_options: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Timings:
    """How an answer came: time to its first word, total time, output (generation) speed,
    prompt (reading) speed, and the tool loop's iterations."""

    ttft: float | None = None
    elapsed: float | None = None
    tokens_per_second: float | None = None
    prompt_tokens_per_second: float | None = None
    iterations: int | None = None
    #: The answer's text was cut: "length" (the output limit) or "repetition".
    cut: str | None = None


@dataclass(slots=True)
class ToolStep:
    """One tool call the agent made while producing an assistant message."""

    id: int
    message_id: int
    iteration: int
    tool: str
    args: Any
    observation: str = ""
    error: str | None = None
    elapsed: float | None = None
    created_at: float = 0.0


@dataclass(slots=True)
class Message:
    """One stored message.

    ``tool_calls`` keeps the provider-level calls (a list of ``{"id","name","arguments"}``
    dicts) so a native-tools history round-trips; ``steps`` are the agent's tool steps,
    filled only by the calls that say so (``load_conversation``).
    """

    id: int
    conversation_id: str
    role: MessageRole
    content: str
    created_at: float
    status: MessageStatus = "complete"
    reasoning: str | None = None
    model: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    timings: Timings = field(default_factory=Timings)
    error: str | None = None
    pinned: bool = False
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    tool_call_id: str | None = None
    name: str | None = None
    steps: list[ToolStep] = field(default_factory=list)
    #: A DAG answer's plan events ({"kind": "DagPlan", "data": {...}}, in order).
    plan: list[dict[str, Any]] = field(default_factory=list)


@dataclass(slots=True)
class ArtifactRecord:
    """A document a tool produced, kept with the conversation (and its message/step)."""

    id: int
    conversation_id: str
    name: str
    mime_type: str
    content: str
    created_at: float
    message_id: int | None = None
    step_id: int | None = None


@dataclass(slots=True)
class Interrupt:
    """A follow-up the user sent while a run was working.

    Its text is also stored as a pinned user message (``message_id``) so history order and
    search treat it like any other message; ``run_message_id`` is the user message of the
    run it was sent into.
    """

    id: int
    conversation_id: str
    message_id: int
    content: str
    status: InterruptStatus
    created_at: float
    run_message_id: int | None = None


@dataclass(slots=True)
class SearchHit:
    """One full-text search result, best first."""

    conversation_id: str
    conversation_title: str
    message_id: int
    role: MessageRole
    snippet: str
    rank: float
    created_at: float


@dataclass(slots=True)
class ConversationDetail:
    """A conversation with everything in it, as the chat view and exports need it."""

    conversation: Conversation
    messages: list[Message]
    artifacts: list[ArtifactRecord]
    interrupts: list[Interrupt]
    #: Versions kept by edit and regenerate that are not shown (``store/branches.py``).
    versions: list[dict[str, Any]] = field(default_factory=list)
