"""Native mode (``_run_native``): tools through the provider's ``tools`` parameter.

One reply may request several tool calls; they run in parallel (``asyncio.gather``) and
their ``tool`` messages are appended in request order directly after the assistant message
that asked for them — the OpenAI protocol rejects anything in between. Interrupts are
therefore drained only after all tool messages are in (SPEC §5). A reply without tool calls
is the final answer.
"""

from __future__ import annotations

import asyncio
from typing import Any

from desktop_app.core.agent.events import AnswerSignal, ThinkingDone, ThinkingStart
from desktop_app.core.agent.prompts import native_observation
from desktop_app.core.agent.result import StepRecord, find_repeat
from desktop_app.core.agent.state import RunState
from desktop_app.core.llm.types import ChatMessage, ToolCall


def _normalise_calls(calls: list[ToolCall], iteration: int) -> list[ToolCall]:
    """Give every call a unique id: some local servers send empty or repeated ids, and a
    ``tool`` message must name exactly one call."""
    seen: set[str] = set()
    out = []
    for index, call in enumerate(calls):
        call_id = call.id
        if not call_id or call_id in seen:
            call_id = f"call_{iteration}_{index}"
        seen.add(call_id)
        out.append(call if call_id == call.id else call.model_copy(update={"id": call_id}))
    return out


def _repeats(state: RunState, calls: list[ToolCall]) -> bool:
    """True when every call only repeats earlier work: the model has nothing new to do
    (small models keep calling tools instead of answering), so the loop ends there."""
    for call in calls:
        tool = state.registry.get(call.name) if call.name in state.registry else None
        read_only = tool is not None and tool.read_only
        required = tool.parameters.get("required") if tool is not None else None
        # As the step would record them: keys a schema does not allow are dropped before a
        # call runs, and the bundled model sent the same calculator call nine times with
        # "format": "float" added.
        assert state.executor is not None
        args = state.executor.as_run(call.name, call.arguments, encoded=True)
        if find_repeat(state.steps, call.name, args, read_only=read_only,
                       required=required) is None:
            return False
    return True


async def run_for_model(state: RunState, tool: str, arguments: str, call_id: str) -> None:
    """Run one call before the model's first turn (a policy's), recorded as the model's own
    call and result so the conversation reads as if the model had made it."""
    assert state.executor is not None
    step = await state.executor.execute(tool, arguments, iteration=0, call_id=call_id,
                                        encoded=True, origin="policy")
    state.steps.append(step)
    state.messages.append(ChatMessage.assistant("", tool_calls=[ToolCall(
        id=call_id, name=tool, arguments=arguments)]))
    state.messages.append(ChatMessage.tool(native_observation(step.observation, step.error),
                                           tool_call_id=call_id, name=tool))


async def run_native(state: RunState) -> None:
    """The native-mode tool loop; fills ``state`` (answer, steps, stop reason).

    With an answer sink (``state.answer_sink``) and a streaming model each call is
    streamed: before any tool ran, a text reply goes to the user as it is generated (it is
    the answer, and is not generated again); once tools ran, the call stops as soon as the
    reply is known to be text, and synthesis writes the answer from the trace — unless
    ``state.continue_after_tools``, where that reply is streamed as the answer too.
    """
    assert state.executor is not None
    specs = state.registry.specs() or None
    streaming = state.answer_sink is not None and bool(state.llm.abilities.get("streaming"))
    for iteration in range(1, state.max_iterations + 1):
        await state.enforce_budget(specs)
        state.iterations = iteration
        await state.emit(ThinkingStart(iteration=iteration))
        cut_short = live = False
        choice: Any = state.take_tool_choice() if specs else None
        written_by_policy = state.first_reply is not None
        if state.first_reply is not None:
            reply, state.first_reply = state.first_reply, None
            state.loop_tools = specs  # as if asked here: synthesis shares this prefix
        elif streaming:
            live = not state.steps or state.continue_after_tools
            reply, cut_short = await state.stream_turn(
                tools=specs, live=live, stop_at_answer=not live and state.stop_early,
                tool_choice=choice)
        else:
            reply = (await state.chat(tools=specs, tool_choice=choice)).message
        calls = _normalise_calls(list(reply.tool_calls), iteration)
        if calls and state.policy is not None and not written_by_policy:
            calls = await state.policy.revise_calls(state, calls)
        if not cut_short:
            state.messages.append(ChatMessage.assistant(
                reply.content or "", tool_calls=calls, reasoning_content=reply.reasoning_content))
        # With tool calls, text next to them is the model's reasoning; without, it is the answer.
        reasoning = (reply.reasoning_content or "").strip()
        if calls and not reasoning:
            reasoning = (reply.content or "").strip()
        if state.announced_iteration != iteration:
            await state.emit(ThinkingDone(iteration=iteration, reasoning=reasoning))

        if calls and _repeats(state, calls):
            state.messages.pop()  # the repeated request is not part of the trace
            calls = []
            cut_short = True  # the answer comes from synthesis, as after a text reply
        if not calls:
            injected = state.drain_interrupts()
            if injected:
                await state.inject(injected)
                if iteration < state.max_iterations:
                    continue  # suppress the pending answer, keep going
                # No iteration left: keep the answer; synthesis answers the interrupt.
            state.answer = "" if cut_short else ((reply.content or "").strip()
                                                  or (reply.reasoning_content or "").strip())
            if not cut_short:
                state.answer_streamed = live and bool(state.streamed.strip()) and not injected
            # No draft from the tool results here: shown to the synthesis as "Draft answer",
            # the bundled model copied the last result's first line as its answer. The
            # driver falls back to those results only if synthesis fails.
            state.stop_reason = "final_answer"
            if state.announced_iteration != iteration:
                await state.emit(AnswerSignal())
            return

        steps: list[StepRecord] = await asyncio.gather(*(
            state.executor.execute(call.name, call.arguments, iteration=iteration,
                                   call_id=call.id, encoded=True)
            for call in calls))
        # gather keeps request order; one failing call is just its own error observation.
        for call, step in zip(calls, steps, strict=True):
            state.steps.append(step)
            state.messages.append(ChatMessage.tool(native_observation(step.observation, step.error),
                                                   tool_call_id=call.id, name=call.name))
        injected = state.drain_interrupts()
        await state.inject(injected)  # only after every tool message
        if (not injected and state.policy is not None
                and await state.policy.after_tools(state, steps)):
            state.stop_reason = "final_answer"
            await state.emit(AnswerSignal())  # the answer is written from the trace
            return

    state.stop_reason = "max_iterations"
