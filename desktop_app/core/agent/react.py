"""``ReActAgent``: the two-phase engine (SPEC §4).

Phase 1, ``run()``: a tool loop of non-streaming ``chat()`` calls, in JSON mode or native
mode, producing an ``AgentResult``. Phase 2, ``stream_answer()``: one streaming call that
turns the trace into the user-facing answer. The LLM is bound at construction and used for
every call of a run; another model means another agent.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import Any, Literal

from desktop_app.core.agent.events import Notice, Phase
from desktop_app.core.agent.guard import ContextGuardLike
from desktop_app.core.agent.interrupts import InterruptQueue
from desktop_app.core.agent.json_mode import Action, parse_action, run_json
from desktop_app.core.agent.metrics import timed
from desktop_app.core.agent.native_mode import run_for_model, run_native
from desktop_app.core.agent.policy import RunPolicy
from desktop_app.core.agent.prompts import (
    ANSWER_SYSTEM_PROMPT,
    DEFAULT_SYSTEM_PROMPT,
    history_for_json,
    json_system_prompt,
    native_system_prompt,
)
from desktop_app.core.agent.repetition import RepetitionGuard
from desktop_app.core.agent.result import AgentResult, attach_partial_result
from desktop_app.core.agent.selection import (
    _TOOL_SELECTION_MAX,
    TOOL_SELECTION_THRESHOLD,
    select_tools,
)
from desktop_app.core.agent.state import AnswerSink, EventSink, RunState
from desktop_app.core.agent.synthesis import (
    SYNTHESIS_SYSTEM_PROMPT,
    continuation_messages,
    fitted_synthesis_messages,
    max_iterations_summary,
)
from desktop_app.core.agent.tool_exec import Confirmer, ShareFn, ToolExecutor
from desktop_app.core.errors import ToolCallsUnsupportedError
from desktop_app.core.llm.base import LLM, ToolChoice, ToolSpec
from desktop_app.core.llm.types import ChatMessage
from desktop_app.core.tools.base import Tool, ToolRegistry

#: Cap on one tool-loop reply. A loop reply is a JSON action or a tool call; without a cap a
#: small local model stuck repeating itself generates until its context is full (minutes).
#: 2,048 still leaves room for a tool argument such as a whole file to write.
DEFAULT_LOOP_MAX_TOKENS = 2048


#: Tool-loop turns before a run stops (hosted models; local ones get fewer: the factory).
DEFAULT_MAX_ITERATIONS = 50


class ReActAgent:
    """A tool-using agent bound to one LLM.

    ``confirm(tool_name, args) -> bool`` is awaited before any tool with ``read_only = False``
    runs; a denial becomes an error observation. ``context_guard`` keeps every loop call
    inside the model's context window. ``tool_timeout`` (seconds) stops a tool that hangs;
    the model sees that as an error observation.

    ``after_tools`` decides who writes the answer once tools ran: ``"synthesize"`` (SPEC §4,
    phase 2) or ``"continue"`` (the model's next text reply is streamed as the answer).
    ``synthesis``: ``"separate"`` is the seed's prompt (a synthesiser's system prompt and the
    trace as text); ``"shared_prefix"`` continues the loop's conversation with its tools
    (a local model's KV cache covers all of it) and a text-only constraint;
    ``"conversation"`` continues it with the base system prompt and no tools.
    ``policy``: help for a model that needs it (``agent/policy.py``: the loop calls it at
    fixed points and knows nothing of what it does); None for none.
    ``guard_repetition``: stop a reply that has fallen into a loop (greedy local decoding).
    """

    def __init__(
        self,
        llm: LLM,
        tools: ToolRegistry | Sequence[Tool] | None = None,
        *,
        system_prompt: str | None = None,
        max_iterations: int = DEFAULT_MAX_ITERATIONS,
        use_native_tools: bool = True,
        context_guard: ContextGuardLike | None = None,
        confirm: Confirmer | None = None,
        temperature: float | None = None,
        max_tokens: int | None = DEFAULT_LOOP_MAX_TOKENS,
        synthesis_max_tokens: int | None = None,
        tool_selection: bool = True,
        selection_threshold: int = TOOL_SELECTION_THRESHOLD,
        max_observation_chars: int = 16_000,
        tool_timeout: float | None = None,
        synthesis_system_prompt: str = SYNTHESIS_SYSTEM_PROMPT,
        after_tools: Literal["synthesize", "continue"] = "synthesize",
        synthesis: Literal["separate", "shared_prefix", "conversation"] = "separate",
        answer_system_prompt: str = ANSWER_SYSTEM_PROMPT,
        policy: RunPolicy | None = None,
        guard_repetition: bool = False,
        share: ShareFn | None = None,
    ) -> None:
        if max_iterations < 1:
            raise ValueError("max_iterations must be at least 1")
        self._llm = llm
        self._tools = tools if isinstance(tools, ToolRegistry) else ToolRegistry(tools or ())
        self._system_prompt = system_prompt or DEFAULT_SYSTEM_PROMPT
        self.max_iterations = max_iterations
        self.use_native_tools = use_native_tools
        self.context_guard = context_guard
        self.confirm = confirm
        #: Asked before a tool that reads the user's own content runs (a model elsewhere).
        self.share = share
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.synthesis_max_tokens = synthesis_max_tokens
        self.tool_selection = tool_selection
        self.selection_threshold = selection_threshold
        self.max_observation_chars = max_observation_chars
        self.tool_timeout = tool_timeout
        self.synthesis_system_prompt = synthesis_system_prompt
        self.after_tools = after_tools
        self.synthesis = synthesis
        self.answer_system_prompt = answer_system_prompt
        self.policy = policy
        self.guard_repetition = guard_repetition

    @property
    def llm(self) -> LLM:
        return self._llm

    @property
    def tools(self) -> ToolRegistry:
        return self._tools

    @property
    def _native_mode_active(self) -> bool:
        """Native function calling only if wanted and the model can do it; else JSON mode."""
        return bool(self.use_native_tools and self._llm.abilities.get("tool_call"))

    @property
    def mode(self) -> str:
        return "native" if self._native_mode_active else "json"

    # --- phase 1 ---------------------------------------------------------------------------
    async def run(self, query: str, *, history: Sequence[ChatMessage] = (),
                  interrupt_queue: InterruptQueue | None = None,
                  on_event: EventSink | None = None,
                  on_answer: AnswerSink | None = None) -> AgentResult:
        """The tool loop for ``query`` after ``history``; returns the trace and brief answer.

        ``on_answer`` receives a final answer's text while it is generated (when the model
        can stream); ``AgentResult.answer_streamed`` then says synthesis must not run.

        Tool failures become observations. LLM errors propagate (with the partial result
        attached: ``desktop_app.core.agent.partial_result(exc)``) so the caller can report
        them; cancellation propagates the same way.
        """
        native = self._native_mode_active
        state = RunState(llm=self._llm, query=query, messages=[], registry=self._tools,
                         mode="native" if native else "json", max_iterations=self.max_iterations,
                         sink=on_event, interrupt_queue=interrupt_queue,
                         guard=self.context_guard, temperature=self.temperature,
                         max_tokens=self.max_tokens, answer_sink=on_answer,
                         continue_after_tools=self.after_tools == "continue",
                         stop_early=self._llm.reuses_prompt_prefix,
                         guard_repetition=self.guard_repetition, policy=self.policy)
        try:
            await self._select(state)
            state.executor = ToolExecutor(state.registry, state.emit, confirm=self.confirm,
                                          share=self.share,
                                          max_observation_chars=self.max_observation_chars,
                                          timeout=self.tool_timeout)
            state.messages = self._initial_messages(query, history, state.registry, native)
            if native:
                await self._prepare(state, history)
                try:
                    await self._run_native(state)
                except ToolCallsUnsupportedError as exc:
                    # The adapter has turned tool calling off for this model (and the app
                    # remembers it), so this notice comes once; this run goes on in JSON mode.
                    await state.emit(Notice(message=f"{exc.message} {exc.hint or ''}".strip()))
                    state.mode = "json"
                    state.messages = self._initial_messages(query, history, state.registry,
                                                            native=False)
                    await self._run_json(state)
            else:
                await self._run_json(state)
            if state.stop_reason == "max_iterations":
                state.answer = max_iterations_summary(state.steps, self.max_iterations)
        except BaseException as exc:  # includes cancellation: report how far we got
            attach_partial_result(exc, state.to_result())
            raise
        return state.to_result()

    async def _prepare(self, state: RunState, history: Sequence[ChatMessage]) -> None:
        """Before the first turn: the policy may narrow the tools (then the conversation is
        laid out again for them), choose the first turn's tool, or run calls for the model."""
        if self.policy is None:
            return
        plan = await self.policy.before_first_turn(state)
        if plan.registry is not None:
            state.registry = plan.registry
            assert state.executor is not None
            state.executor.registry = plan.registry
            state.messages = self._initial_messages(state.query, history, plan.registry, True,
                                                    text_only=not len(plan.registry))
        state.next_tool_choice = plan.tool_choice
        state.first_reply = plan.first_reply
        for call in plan.calls:
            await run_for_model(state, call.name, call.arguments, call.id)

    async def _select(self, state: RunState) -> None:
        if not (self.tool_selection and len(self._tools) > self.selection_threshold):
            return
        await state.emit(Phase(phase="selecting_tools", total_tools=len(self._tools)))
        outcome = await select_tools(self._llm, self._tools, state.query,
                                     limit=_TOOL_SELECTION_MAX, temperature=self.temperature)
        state.usage = state.usage + outcome.usage
        state.registry = outcome.registry
        state.selected_tools = outcome.selected

    def _initial_messages(self, query: str, history: Sequence[ChatMessage],
                          registry: ToolRegistry, native: bool,
                          text_only: bool = False) -> list[ChatMessage]:
        # Only this run's question and its interrupts are pinned: earlier turns' questions
        # may be summarised, or a long chat would pile up messages compaction cannot touch.
        earlier = [m.model_copy(update={"pinned": False}) if m.pinned else m for m in history]
        if earlier and earlier[0].role == "system":
            earlier = earlier[1:]  # this agent's own system prompt replaces an old one
        if text_only:
            if self._system_prompt == DEFAULT_SYSTEM_PROMPT:
                # Exactly like plain chat: no system turn, so the chat template's own
                # (the one the model was trained with; Qwen's "You are Qwen…") applies.
                # Under our answer prompt the bundled model answered "Translate 'good
                # morning' into Spanish." with "Good morning" 4 times in 4 (greedy and
                # sampled); with the template's it wrote "buenos días" 4 in 4 (measured).
                return [*earlier, ChatMessage.user(query, pinned=True)]
            system = self._system_prompt  # a user's own assistant prompt stays
        elif native:
            system = native_system_prompt(self._system_prompt, registry)
        else:
            system = json_system_prompt(self._system_prompt, registry)
            earlier = history_for_json(earlier)
        return [ChatMessage.system(system), *earlier, ChatMessage.user(query, pinned=True)]

    async def _run_json(self, state: RunState) -> None:
        await run_json(state)

    async def _run_native(self, state: RunState) -> None:
        await run_native(state)

    @staticmethod
    def _parse_action(content: str, reasoning_content: str | None = None) -> Action:
        return parse_action(content, reasoning_content)

    # --- phase 2 ---------------------------------------------------------------------------
    async def stream_answer(self, query: str, result: AgentResult) -> AsyncIterator[str]:
        """The final answer, token by token, from one ``stream_chat`` call over the trace.

        With ``synthesis="shared_prefix"`` the model may offer a call instead of an answer
        (tools stay offered, so its KV cache holds the prompt, and no grammar slows decoding:
        measured 18 against 37 tokens/s); then the separate synthesis writes the answer.
        When the stream finishes, its usage is added to ``result.usage``.
        """
        if self.synthesis == "shared_prefix" and result.loop_tools:
            # Native mode only: a JSON-mode conversation would be continued with JSON.
            messages = continuation_messages(self._llm, result, self.synthesis_max_tokens)
            if messages is not None:
                shown = False
                async for text in self._stream_synthesis(messages, result, result.loop_tools,
                                                         "auto"):
                    shown = True
                    yield text
                if shown:
                    return
        elif self.synthesis == "conversation":
            messages = continuation_messages(self._llm, result, self.synthesis_max_tokens,
                                             system_prompt=self._own(self.answer_system_prompt))
            if messages is not None:
                async for text in self._stream_synthesis(messages, result, None, None):
                    yield text
                return
        messages = fitted_synthesis_messages(self._llm, query, result,
                                             self._own(self.synthesis_system_prompt),
                                             self.synthesis_max_tokens)
        async for text in self._stream_synthesis(messages, result, None, None):
            yield text

    def _own(self, prompt: str) -> str:
        """``prompt`` for the answer, under the assistant's own instructions when it has
        any: the answer is what they are about ("answer in French", "start with Arr"), and
        the synthesis wrote it without them."""
        if self._system_prompt == DEFAULT_SYSTEM_PROMPT:
            return prompt
        return f"{self._system_prompt}\n\n{prompt}"

    async def _stream_synthesis(self, messages: list[ChatMessage], result: AgentResult,
                                tools: list[ToolSpec] | None,
                                tool_choice: ToolChoice) -> AsyncIterator[str]:
        """The text of one synthesis call as it streams; a call the model makes instead is
        dropped (nothing is yielded for it)."""
        usage = None
        finish_reason: str | None = None
        guard = RepetitionGuard(enabled=self.guard_repetition)  # greedy decoding can loop
        stream = timed(self._llm.stream_chat(messages, tools=tools, tool_choice=tool_choice,
                                             temperature=self.temperature,
                                             max_tokens=self.synthesis_max_tokens))
        try:
            async for chunk in stream:
                if chunk.usage is not None:
                    usage = chunk.usage
                finish_reason = chunk.finish_reason or finish_reason
                if chunk.content:
                    shown = guard.feed(chunk.content)
                    if shown:
                        yield shown
                    if guard.tripped:
                        break
        finally:
            aclose: Any = getattr(stream, "aclose", None)
            if aclose is not None:
                # Close promptly so a local model stops generating when the consumer stops.
                await aclose()
        if guard.tripped:
            result.answer_cut = "repetition"
        elif finish_reason == "length":
            result.answer_cut = "length"
        if usage is not None:
            result.usage = result.usage + usage
            result.synthesis_usage = (usage if result.synthesis_usage is None
                                      else result.synthesis_usage + usage)
