"""JSON mode (``_run_json``): tools described in the system prompt, one JSON action per reply.

The model answers ``{"type": "tool_call", "tool", "args", "reasoning"}`` or
``{"type": "final_answer", "answer", "reasoning"}``. Output that is not such JSON becomes the
parse-error sentinel: a final answer whose reasoning is ``UNPARSED_REASONING``. The loop
answers the sentinel with one reformat request; if the next reply fails too, its raw text
is the answer (SPEC §4). Interrupts are drained right after every assistant message.
"""

from __future__ import annotations

import json
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any, Literal

from desktop_app.core.agent.events import AnswerSignal, ThinkingDone, ThinkingStart
from desktop_app.core.agent.prompts import (
    REFORMAT_INSTRUCTION,
    UNPARSED_REASONING,
    json_observation,
)
from desktop_app.core.agent.state import RunState
from desktop_app.core.llm.json_extract import extract_json
from desktop_app.core.llm.structured import accepts_response_schema
from desktop_app.core.llm.types import ChatMessage

_TOOL_KEYS = ("tool", "tool_name", "name", "action")
_ARG_KEYS = ("args", "arguments", "tool_args", "parameters", "action_input", "input")
_FINAL_TYPES = {"final_answer", "final", "answer", "finish"}
_TOOL_TYPES = {"tool_call", "tool", "action", "function_call"}


@dataclass(slots=True)
class Action:
    """One parsed JSON-mode reply."""

    kind: Literal["tool_call", "final_answer"]
    tool: str = ""
    args: Any = None
    answer: str = ""
    reasoning: str = ""

    @property
    def unparsed(self) -> bool:
        """True for the parse-error sentinel."""
        return self.kind == "final_answer" and self.reasoning == UNPARSED_REASONING


def _text(value: Any) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _top_level_array(content: str) -> list[Any] | None:
    """The reply's JSON array when the whole reply (or its one code fence) is one."""
    text = content.strip()
    if text.startswith("```"):
        text = text.strip("`").partition("\n")[2].strip()
    if not text.startswith("["):
        return None
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, list) else None


def parse_action(content: str, reasoning_content: str | None = None, *,
                 cut_off: bool = False, tool_names: Collection[str] | None = None) -> Action:
    """The action in ``content``; the sentinel when there is none.

    Small models drift from the format, so common variants are accepted (``tool_name``,
    ``arguments``, a missing ``type``). ``reasoning_content`` fills an empty ``reasoning``.
    A reply that stopped by itself one ``}`` short is closed and used; one ``cut_off`` by
    the token limit is not (its last value is unfinished: a runaway "5700000…" answer), so
    it gets the reformat request instead.

    Data is not an action: a JSON array of records is an answer, not its first record, and
    without a ``type`` a ``name``/``action`` field names a tool only when it is one of
    ``tool_names`` or arguments come with it (``{"name": "Alice", "age": 30}`` is a record
    the user asked for, not a call to a tool "Alice").
    """
    array = _top_level_array(content)
    if array is not None and not (array and isinstance(array[0], dict)
                                  and str(array[0].get("type", "")).lower() in _TOOL_TYPES):
        return Action(kind="final_answer", answer=content.strip(),
                      reasoning=(reasoning_content or "").strip())
    data = extract_json(content, close_truncated=not cut_off)
    fallback_reasoning = (reasoning_content or "").strip()
    if data is None:
        return Action(kind="final_answer", answer=content.strip(), reasoning=UNPARSED_REASONING)
    reasoning = _text(data.get("reasoning") or data.get("thought")).strip() or fallback_reasoning
    kind = str(data.get("type", "")).strip().lower()
    tool = next((data[k] for k in _TOOL_KEYS if isinstance(data.get(k), str) and data[k]), "")
    if tool.strip().lower() in _FINAL_TYPES:  # LangChain style {"action": "final_answer", ...}
        answer = next((data[k] for k in _ARG_KEYS if k in data), data.get("answer"))
        if answer is not None:
            return Action(kind="final_answer", answer=_text(answer), reasoning=reasoning)
    elif kind in _TOOL_TYPES or (not kind and tool and "answer" not in data
                                 and _names_a_tool(data, tool, tool_names)):
        if tool:
            args = next((data[k] for k in _ARG_KEYS if k in data), None)
            return Action(kind="tool_call", tool=tool.strip(), args=args, reasoning=reasoning)
    elif kind in _FINAL_TYPES or (not kind and "answer" in data):
        answer = data.get("answer", data.get("final_answer", data.get("content")))
        if answer is not None:
            return Action(kind="final_answer", answer=_text(answer), reasoning=reasoning)
    return Action(kind="final_answer", answer=content.strip(), reasoning=UNPARSED_REASONING)


def _names_a_tool(data: dict[str, Any], tool: str, tool_names: Collection[str] | None) -> bool:
    """Without a ``type``: is this object a tool call rather than data with a name in it?"""
    if any(isinstance(data.get(k), str) and data[k] for k in ("tool", "tool_name")):
        return True  # only actions use these keys
    if any(k in data for k in _ARG_KEYS):
        return True
    return tool_names is not None and tool.strip() in tool_names


def action_schema(tool_names: list[str]) -> dict[str, Any]:
    """The JSON schema of one action, for models that can constrain decoding to it."""
    tool: dict[str, Any] = {"type": "string"}
    if tool_names:
        tool["enum"] = tool_names
    return {"type": "object",
            "properties": {"type": {"type": "string", "enum": ["tool_call", "final_answer"]},
                           "tool": tool, "args": {"type": "object"},
                           "answer": {"type": "string"}, "reasoning": {"type": "string"}},
            "required": ["type"]}


def loop_response_format(state: RunState) -> dict[str, Any] | None:
    """JSON mode for models that have it (a hosted API, llama.cpp with constrained JSON),
    so the parse-error path becomes rare; constrained local models also get the action
    schema, which rules out unknown tool names too."""
    if not state.llm.abilities.get("json_mode"):
        return None
    response_format: dict[str, Any] = {"type": "json_object"}
    if accepts_response_schema(state.llm):
        response_format["schema"] = action_schema(state.registry.names())
    return response_format


async def run_json(state: RunState) -> None:
    """The JSON-mode tool loop; fills ``state`` (answer, steps, stop reason)."""
    assert state.executor is not None
    response_format = loop_response_format(state)
    reformat_pending = False  # the previous reply was the sentinel and we asked to reformat
    last_unparsed: str | None = None
    for iteration in range(1, state.max_iterations + 1):
        await state.enforce_budget()
        state.iterations = iteration
        await state.emit(ThinkingStart(iteration=iteration))
        result = await state.chat(response_format=response_format)
        reply = result.message
        content = reply.content or ""
        action = parse_action(content, reply.reasoning_content,
                              cut_off=result.finish_reason == "length",
                              tool_names=state.registry.names())
        state.messages.append(ChatMessage.assistant(content,
                                                    reasoning_content=reply.reasoning_content))
        await state.emit(ThinkingDone(iteration=iteration, reasoning=action.reasoning))
        injected = state.drain_interrupts()  # right after the assistant message (SPEC §5)

        if action.kind == "final_answer":
            if action.unparsed:
                last_unparsed = action.answer or (reply.reasoning_content or "").strip()
            else:
                last_unparsed = None
            if injected:
                await state.inject(injected)
                if iteration < state.max_iterations or action.unparsed:
                    # A pending final answer is suppressed: the user said more; keep going.
                    reformat_pending = False
                    continue
                # No iteration left: keep the answer; synthesis answers the interrupt.
            if action.unparsed and not reformat_pending:
                state.messages.append(ChatMessage.user(REFORMAT_INSTRUCTION))
                reformat_pending = True
                continue
            state.answer = action.answer if not action.unparsed else (last_unparsed or "")
            state.stop_reason = "unparsed_answer" if action.unparsed else "final_answer"
            await state.emit(AnswerSignal())
            return

        reformat_pending = False
        last_unparsed = None
        previous = state.steps[-1] if state.steps else None
        step = await state.executor.execute(action.tool, action.args, iteration=iteration)
        repeated = (previous is not None and previous.tool == step.tool
                    and previous.args == step.args and previous.observation == step.observation)
        state.steps.append(step)
        state.messages.append(ChatMessage.user(
            json_observation(step.tool, step.observation, step.error, repeated=repeated)))
        # Drained above; the message goes after the observation so action and observation
        # stay adjacent and the user's words are the last thing the model reads.
        await state.inject(injected)

    if last_unparsed:
        # The loop ran out while the model kept answering in prose: its text is the answer.
        state.answer, state.stop_reason = last_unparsed, "unparsed_answer"
    else:
        state.stop_reason = "max_iterations"
