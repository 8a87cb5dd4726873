"""The mutable state of one ``run()``: messages, steps, usage, events, LLM calls.

Shared by the JSON-mode and native-mode loops so both enforce the context budget, count
usage, emit events and inject interrupts the same way.
"""

from __future__ import annotations

import contextlib
import inspect
from collections.abc import AsyncGenerator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from desktop_app.core.agent.events import (
    AnswerSignal,
    Compact,
    Event,
    Inject,
    ThinkingDone,
)
from desktop_app.core.agent.guard import ContextGuardLike
from desktop_app.core.agent.interrupts import InterruptQueue, interrupt_message
from desktop_app.core.agent.metrics import timed
from desktop_app.core.agent.policy import RunPolicy
from desktop_app.core.agent.repetition import RepetitionGuard
from desktop_app.core.agent.result import AgentResult, AnswerCut, StepRecord, StopReason
from desktop_app.core.agent.tool_exec import ToolExecutor
from desktop_app.core.errors import ContextOverflowError
from desktop_app.core.llm.base import LLM, ToolChoice, ToolSpec
from desktop_app.core.llm.types import ChatMessage, LLMResult, StreamChunk, ToolCall, Usage
from desktop_app.core.tools.base import ToolRegistry

#: ``on_event`` may be a plain function or a coroutine function.
EventSink = Callable[[Event], Any]
#: Receives the visible text of a final answer while the loop's call is still generating.
AnswerSink = Callable[[str], Awaitable[None]]


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
    #: Where a final answer streams as it is generated (None: the loop does not stream).
    answer_sink: AnswerSink | None = None
    #: Text already sent to ``answer_sink`` in this run.
    streamed: str = ""
    #: Tool specs of the last loop call (synthesis repeats them to share the prompt prefix).
    loop_tools: list[ToolSpec] | None = None
    #: The final answer is the text streamed live (set by the loop that produced it).
    answer_streamed: bool = False
    #: After tools ran, stream the model's next text reply as the answer (no synthesis).
    continue_after_tools: bool = False
    #: ``tool_choice`` of the next model turn only (set by a run policy); reset once used.
    next_tool_choice: ToolChoice = None
    #: The model's first reply when a run policy already generated it; taken once.
    first_reply: ChatMessage | None = None
    #: After tools ran, stop a reply once it is known to be text (synthesis follows): for
    #: local models, where every generated token costs the user time.
    stop_early: bool = False
    #: Stop a looping reply (small local models decoding greedily); never for hosted ones.
    guard_repetition: bool = False
    #: Why the answer streamed by the loop was cut ("length", "repetition"), if it was.
    answer_cut: AnswerCut | None = None
    #: Help for the model (``agent/policy.py``), consulted at fixed points; None: none.
    policy: RunPolicy | None = None
    #: The iteration whose ThinkingDone and AnswerSignal were already emitted, because its
    #: reply began streaming as the answer (the protocol's order must hold: SPEC §8).
    announced_iteration: int = 0

    async def emit(self, event: Event) -> None:
        if self.sink is None:
            return
        outcome = self.sink(event)
        if inspect.isawaitable(outcome):
            await outcome

    def take_tool_choice(self) -> ToolChoice:
        choice, self.next_tool_choice = self.next_tool_choice, None
        return choice

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
        # Before any tool ran, what does not fit is the earlier conversation (a reopened long
        # chat): summarised as a conversation. Later it is this run's tool trace.
        hint = "react_iteration" if self.steps else "general"
        result = await self.guard.check_and_compact(self.messages, self._budget(tools),
                                                    hint, force=force)
        self.messages = list(result.messages)
        self.usage = self.usage + result.usage
        cut = getattr(result, "pinned_cut", None) or []
        if result.compacted or cut:
            before, after = (max(cut) if cut else (None, None))
            await self.emit(Compact(original_messages=result.original_count,
                                    kept_messages=result.kept_count,
                                    question_tokens=before, question_kept_tokens=after))

    async def chat(self, *, tools: list[ToolSpec] | None = None,
                   response_format: dict[str, Any] | None = None,
                   tool_choice: ToolChoice = None) -> LLMResult:
        """One non-streaming loop call; one forced compaction + retry on context overflow."""
        try:
            result = await self._chat_once(tools, response_format, tool_choice)
        except ContextOverflowError as exc:
            if self.guard is None:
                raise ContextOverflowError(
                    f"The conversation no longer fits into the context window of "
                    f"'{self.llm.model_id}' ({self.llm.context_size} tokens).",
                    hint="Start a new conversation, or pick a model with a larger context.",
                ) from exc
            await self.enforce_budget(tools, force=True)
            try:
                result = await self._chat_once(tools, response_format, tool_choice)
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

    async def stream_turn(self, *, tools: list[ToolSpec] | None, live: bool,
                          stop_at_answer: bool,
                          tool_choice: ToolChoice = None) -> tuple[ChatMessage, bool]:
        """One loop call, streamed: ``(reply, cut_short)``.

        ``live``: visible text goes to ``answer_sink`` as it arrives (a direct answer is
        then never generated twice). ``stop_at_answer``: as soon as the reply is known to be
        text rather than a tool call, generation stops (synthesis will write the answer) and
        ``cut_short`` is True. Context overflow is handled like ``chat``.
        """
        self.loop_tools = tools
        try:
            return await self._stream_once(tools, live, stop_at_answer, tool_choice)
        except ContextOverflowError:
            if self.guard is None or self.streamed:
                raise
            await self.enforce_budget(tools, force=True)
            return await self._stream_once(tools, live, stop_at_answer, tool_choice)

    async def _stream_once(self, tools: list[ToolSpec] | None, live: bool,
                           stop_at_answer: bool,
                           tool_choice: ToolChoice) -> tuple[ChatMessage, bool]:
        parts: list[str] = []
        reasoning: list[str] = []
        calls: list[ToolCall] = []
        usage: Usage | None = None
        cut_short = False
        finish_reason: str | None = None
        guard = RepetitionGuard(enabled=self.guard_repetition)  # a loop stops, not at the limit
        stream = timed(self.llm.stream_chat(self.messages, tools=tools, tool_choice=tool_choice,
                                            temperature=self.temperature,
                                            max_tokens=self.max_tokens))
        agen: AsyncGenerator[StreamChunk, None] = stream  # type: ignore[assignment]
        async with contextlib.aclosing(agen):
            async for chunk in agen:
                if chunk.reasoning:
                    reasoning.append(chunk.reasoning)
                calls.extend(chunk.tool_calls)
                if chunk.usage is not None:
                    usage = chunk.usage
                finish_reason = chunk.finish_reason or finish_reason
                if not chunk.content:
                    continue
                parts.append(chunk.content)
                if stop_at_answer and not calls and "".join(parts).strip():
                    cut_short = True
                    break
                if live and self.answer_sink is not None:
                    if self.announced_iteration != self.iterations:
                        # The reply is the answer: close the thinking step and signal it
                        # before the first visible token, as a non-streamed run would.
                        self.announced_iteration = self.iterations
                        await self.emit(ThinkingDone(iteration=self.iterations,
                                                     reasoning="".join(reasoning).strip()))
                        await self.emit(AnswerSignal())
                    text = guard.feed(chunk.content)
                    if text and len(parts) == 1 and self.streamed.strip():
                        text = "\n\n" + text.lstrip()  # a new reply after earlier text
                    if text:
                        self.streamed += text
                        await self.answer_sink(text)
                    if guard.tripped:
                        break
        if usage is None:
            # A call stopped early reports no usage; count its prompt as the guard would.
            usage = Usage.of(self._estimate_prompt(tools), len(parts))
        self.usage = self.usage + usage
        # A loop that was cut is recorded as it was shown.
        content = guard.shown if guard.tripped else "".join(parts)
        if live and not calls and not cut_short:
            self.answer_cut = ("repetition" if guard.tripped else
                               "length" if finish_reason == "length" else None)
        reply = ChatMessage.assistant(content, tool_calls=calls,
                                      reasoning_content="".join(reasoning) or None)
        return reply, cut_short

    def _estimate_prompt(self, tools: list[ToolSpec] | None) -> int:
        from desktop_app.core.context.tokens import TokenCounter

        counter = TokenCounter(self.llm)
        return counter.count_messages(self.messages) + counter.count_tools(tools)

    async def _chat_once(self, tools: list[ToolSpec] | None,
                         response_format: dict[str, Any] | None,
                         tool_choice: ToolChoice = None) -> LLMResult:
        return await self.llm.chat(self.messages, tools=tools, response_format=response_format,
                                   tool_choice=tool_choice if tools else None,
                                   temperature=self.temperature, max_tokens=self.max_tokens)

    # --- result ----------------------------------------------------------------------------
    def to_result(self) -> AgentResult:
        return AgentResult(answer=self.answer, steps=list(self.steps), iterations=self.iterations,
                           usage=self.usage, messages=list(self.messages),
                           model=self.llm.model_id, query=self.query, mode=self.mode,
                           stop_reason=self.stop_reason, interrupts=list(self.interrupts),
                           selected_tools=self.selected_tools, streamed=self.streamed,
                           answer_streamed=self.answer_streamed, loop_tools=self.loop_tools,
                           answer_cut=self.answer_cut)
