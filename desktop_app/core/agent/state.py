"""The mutable state of one ``run()``: messages, steps, usage, events, LLM calls.

Shared by the JSON-mode and native-mode loops so both enforce the context budget, count
usage, emit events and inject interrupts the same way.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from desktop_app.core.agent.events import Compact, Event, Inject
from desktop_app.core.agent.guard import ContextGuardLike
from desktop_app.core.agent.interrupts import InterruptQueue, interrupt_message
from desktop_app.core.agent.result import AgentResult, StepRecord, StopReason
from desktop_app.core.agent.tool_exec import ToolExecutor
from desktop_app.core.errors import ContextOverflowError
from desktop_app.core.llm.base import LLM, ToolSpec
from desktop_app.core.llm.types import ChatMessage, LLMResult, Usage
from desktop_app.core.tools.base import ToolRegistry

#: ``on_event`` may be a plain function or a coroutine function.
EventSink = Callable[[Event], Any]


@dataclass
class RunState:
    """Everything one run accumulates; turned into an ``AgentResult`` at the end."""

    llm: LLM
    query: str
    messages: list[ChatMessage]
    registry: ToolRegistry
    mode: Literal["json", "native"]
    max_iterations: int
    sink: EventSink | None = None
    interrupt_queue: InterruptQueue | None = None
    guard: ContextGuardLike | None = None
    temperature: float | None = None
    max_tokens: int | None = None
    executor: ToolExecutor | None = None
    steps: list[StepRecord] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    iterations: int = 0
    interrupts: list[str] = field(default_factory=list)
    answer: str = ""
    stop_reason: StopReason = "final_answer"
    selected_tools: list[str] | None = None
    budget: int | None = None

    async def emit(self, event: Event) -> None:
        if self.sink is None:
            return
        outcome = self.sink(event)
        if inspect.isawaitable(outcome):
            await outcome

    # --- interrupts ------------------------------------------------------------------------
    def drain_interrupts(self) -> list[str]:
        """Take queued interrupts (the caller decides where their message goes)."""
        if self.interrupt_queue is None:
            return []
        texts = self.interrupt_queue.drain()
        self.interrupts.extend(texts)
        return texts

    async def inject(self, texts: list[str]) -> None:
        """Append one pinned ``[USER INTERRUPT]`` message for ``texts`` and report each."""
        if not texts:
            return
        self.messages.append(interrupt_message(texts))
        for text in texts:
            await self.emit(Inject(content=text))

    # --- context budget and LLM calls ------------------------------------------------------
    def _budget(self, tools: list[ToolSpec] | None) -> int:
        assert self.guard is not None
        if self.budget is None:
            try:
                # The real guard also subtracts the tools' payload; the protocol only needs llm.
                self.budget = self.guard.budget_for(self.llm, tools=tools)  # type: ignore[call-arg]
            except TypeError:
                self.budget = self.guard.budget_for(self.llm)
        return self.budget

    async def enforce_budget(self, tools: list[ToolSpec] | None = None, *,
                             force: bool = False) -> None:
        """Top of every iteration: let the guard shrink the messages if they do not fit."""
        if self.guard is None:
            return
        result = await self.guard.check_and_compact(self.messages, self._budget(tools),
                                                    "react_iteration", force=force)
        self.messages = list(result.messages)
        self.usage = self.usage + result.usage
        if result.compacted:
            await self.emit(Compact(original_messages=result.original_count,
                                    kept_messages=result.kept_count))

    async def chat(self, *, tools: list[ToolSpec] | None = None,
                   response_format: dict[str, Any] | None = None) -> LLMResult:
        """One non-streaming loop call; one forced compaction + retry on context overflow."""
        try:
            result = await self._chat_once(tools, response_format)
        except ContextOverflowError as exc:
            if self.guard is None:
                raise ContextOverflowError(
                    f"The conversation no longer fits into the context window of "
                    f"'{self.llm.model_id}' ({self.llm.context_size} tokens).",
                    hint="Start a new conversation, or pick a model with a larger context.",
                ) from exc
            await self.enforce_budget(tools, force=True)
            try:
                result = await self._chat_once(tools, response_format)
            except ContextOverflowError as again:
                raise ContextOverflowError(
                    f"The conversation does not fit into the context window of "
                    f"'{self.llm.model_id}' ({self.llm.context_size} tokens), even after "
                    f"compacting it.",
                    hint="Start a new conversation, shorten your message, or pick a model "
                         "with a larger context window.",
                ) from again
        self.usage = self.usage + result.usage
        return result

    async def _chat_once(self, tools: list[ToolSpec] | None,
                         response_format: dict[str, Any] | None) -> LLMResult:
        return await self.llm.chat(self.messages, tools=tools, response_format=response_format,
                                   temperature=self.temperature, max_tokens=self.max_tokens)

    # --- result ----------------------------------------------------------------------------
    def to_result(self) -> AgentResult:
        return AgentResult(answer=self.answer, steps=list(self.steps), iterations=self.iterations,
                           usage=self.usage, messages=list(self.messages),
                           model=self.llm.model_id, query=self.query, mode=self.mode,
                           stop_reason=self.stop_reason, interrupts=list(self.interrupts),
                           selected_tools=self.selected_tools)
