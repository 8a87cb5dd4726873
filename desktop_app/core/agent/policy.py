"""The seam between the generic loop and help for models that need it (SPEC §10).

The loop asks a ``RunPolicy`` before the model's first turn and does what the answer says:
which tools to offer (an empty registry: answer as plain chat), which tool the first turn
must call, and which calls to run for the model; how each later turn's calls are made; and
after each turn's calls, whether the work is done. The loop knows nothing of how a policy decides; policies live in
``desktop_app.core.local_policy`` and are chosen per model by the agent factory (hosted
models get none).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from desktop_app.core.agent.result import StepRecord
from desktop_app.core.llm.base import ToolChoice, ToolSpec
from desktop_app.core.llm.types import ChatMessage, ToolCall
from desktop_app.core.tools.base import ToolRegistry


class RunView(Protocol):
    """What a policy sees of a run (``RunState`` is one)."""

    query: str
    messages: list[ChatMessage]
    registry: ToolRegistry
    steps: list[StepRecord]
    temperature: float | None


@dataclass
class FirstTurnPlan:
    """What the loop does before the first model turn (the defaults: nothing)."""

    #: The tools to offer from now on (None: keep them; empty: answer as plain chat).
    registry: ToolRegistry | None = None
    #: ``tool_choice`` of the first turn (a forced call of one tool, say).
    tool_choice: ToolChoice = None
    #: Calls run before the first turn, recorded as the model's own with origin "policy".
    calls: list[ToolCall] = field(default_factory=list)
    #: The model's first turn, already generated (and checked) by the policy: the loop takes
    #: it as the model's reply instead of asking for it again.
    first_reply: ChatMessage | None = None


class RunPolicy(Protocol):
    """Help for one model, consulted at fixed points of a run."""

    name: str

    async def before_first_turn(self, state: RunView) -> FirstTurnPlan:
        """How the run starts: ``state`` holds the question, tools and messages."""
        ...

    def warm_tool_lists(self, registry: ToolRegistry) -> list[list[ToolSpec]]:
        """Tool lists, besides the registry's own, that this policy's calls offer: their
        system turns are prepared with the model (a local model's prompt state)."""
        ...

    async def revise_calls(self, state: RunView, calls: list[ToolCall]) -> list[ToolCall]:
        """The calls the model wrote on one of its turns, as they are to be made (the
        first turn's, when the policy wrote it, are not passed again)."""
        ...

    async def after_tools(self, state: RunView, steps: list[StepRecord]) -> str | None:
        """After the calls of one turn ran: None to let the model go on; else the loop
        ends and the answer is written from the trace. The text says why (for tests
        and the run's record)."""
        ...
