"""The final answer of a DAG run, streamed from the step results of every round.

Like the agent's phase 2 (SPEC §4): one streaming call, a synthesiser prompt (present the
results directly, Markdown, no meta commentary, the language of the goal), each step result
cut to 2,000 characters. If streaming fails before any text arrived, the caller gets a
fallback answer built without a model; text already streamed is never repeated.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING

from desktop_app.core.agent.metrics import timed
from desktop_app.core.dag.results import ExecutionResult
from desktop_app.core.llm.types import ChatMessage, Usage

if TYPE_CHECKING:
    from desktop_app.core.llm.base import LLM

log = logging.getLogger(__name__)

RESULT_CHARS = 2000

SYNTHESIS_PROMPT = (
    "You are a synthesiser. Several workers each did one part of the user's goal; their "
    "results are below. Write the final answer to the goal from them. Present the results "
    "directly, as if you had done the work yourself. Use Markdown where it helps. No meta "
    "commentary (do not say 'based on the steps' or 'the workers found'). If a part could "
    "not be done, say so briefly. Answer in the language of the goal."
)


def results_text(executions: Sequence[ExecutionResult]) -> str:
    """The step results of all rounds, oldest round first, for the synthesis prompt."""
    parts: list[str] = []
    for number, execution in enumerate(executions, start=1):
        if len(executions) > 1:
            parts.append(f"## Round {number}")
        parts.append(execution.summary(max_chars=RESULT_CHARS))
    return "\n\n".join(parts)


def synthesis_messages(goal: str, executions: Sequence[ExecutionResult],
                       interrupts: Sequence[str] = (),
                       unmet: str | None = None,
                       instructions: str | None = None) -> list[ChatMessage]:
    """The system and user messages of the synthesis call.

    ``instructions``: the assistant's own system prompt, which the answer follows.
    ``interrupts`` are messages the user sent during the run; the answer must address them.
    ``unmet``: the analyzer's reason when the goal was not reached.
    The analyzer's draft answer is deliberately left out: small models copy such a line
    verbatim, label included. It serves only as the fallback when synthesis fails.
    """
    user = f"Goal: {goal.strip()}\n\nStep results:\n{results_text(executions)}"
    if unmet:
        # An answer must not read as complete when the check found it is not.
        user += (f"\n\nThe check found the goal not fully reached: {unmet}\nSay plainly what "
                 "is missing or uncertain.")
    if interrupts:
        user += ("\n\nThe user added during the work (address this too):\n"
                 + "\n".join(f"- {text}" for text in interrupts))
    system = f"{instructions.strip()}\n\n{SYNTHESIS_PROMPT}" if instructions else SYNTHESIS_PROMPT
    return [ChatMessage.system(system), ChatMessage.user(user)]


def fallback_answer(executions: Sequence[ExecutionResult], draft: str = "") -> str:
    """An answer without a model: the reviewer's draft, else the successful results."""
    if draft.strip():
        return draft.strip()
    latest_ok = [run for execution in reversed(executions) for run in execution.runs.values()
                 if run.ok and run.result.strip()]
    if not latest_ok:
        return "The plan could not be completed: no step produced a result."
    if len(latest_ok) == 1:
        return latest_ok[0].result.strip()
    return "\n\n".join(f"**{run.step.task}**\n{run.result.strip()}"
                       for run in reversed(latest_ok))


async def stream_synthesis(llm: LLM, messages: list[ChatMessage],
                           on_delta: Callable[[str], Awaitable[None]], *,
                           max_tokens: int | None = None) -> tuple[str, Usage, Exception | None]:
    """Stream the answer through ``on_delta``; returns the text, the usage and any error."""
    text = ""
    usage = Usage()
    try:
        async for chunk in timed(llm.stream_chat(messages, max_tokens=max_tokens)):
            if chunk.content:
                text += chunk.content
                await on_delta(chunk.content)
            if chunk.usage is not None:
                usage = usage + chunk.usage
    except Exception as exc:  # noqa: BLE001 - returned with the text so far
        log.warning("synthesis failed after %d characters: %s", len(text), exc)
        return text, usage, exc
    return text, usage, None
