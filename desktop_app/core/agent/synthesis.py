"""Phase 2: the synthesis prompt built from a run's trace (SPEC §4).

The user message holds the original question, every tool call with its result (cut to
``SYNTHESIS_RESULT_LIMIT`` characters), every user interrupt of the run, and the loop's
brief answer. It is the same in JSON and native mode because it is built from
``AgentResult.steps``, not from the mode-specific message history.
"""

from __future__ import annotations

from desktop_app.core.agent.prompts import cut, format_args
from desktop_app.core.agent.result import AgentResult, StepRecord
from desktop_app.core.llm.types import ChatMessage

SYNTHESIS_RESULT_LIMIT = 2_000

SYNTHESIS_SYSTEM_PROMPT = """\
You write the final answer to the user's question. You are given the question, the tool \
calls an assistant made with their results, and the assistant's draft answer.
- Present the results directly, as your own answer; be complete but concise.
- Use Markdown where it helps: lists, tables, code blocks, math.
- No meta commentary: never say "based on the tool output", "according to the trace" or \
similar, and do not mention tools unless the user asked about them.
- If something failed and the answer is incomplete, say briefly what is missing.
- Documents shown in the preview pane (artifacts) are already visible to the user: refer to \
them, never reproduce their source.
- If the user added messages while the work was running, answer those too.
- Answer in the language of the user's original question."""


def format_trace(result: AgentResult, limit: int = SYNTHESIS_RESULT_LIMIT) -> str:
    """Every tool call and its result, numbered, each result cut to ``limit`` characters."""
    if not result.steps:
        return "(no tools were used)"
    lines = []
    for number, step in enumerate(result.steps, 1):
        lines.append(f"{number}. {step.tool}({format_args(step.args, 300)})")
        if step.error:
            lines.append(f"   Error: {cut(step.error, limit)}")
        if step.observation:
            lines.append(f"   Result: {cut(step.observation, limit)}")
    return "\n".join(lines)


def synthesis_messages(query: str, result: AgentResult,
                       system_prompt: str = SYNTHESIS_SYSTEM_PROMPT) -> list[ChatMessage]:
    """The two messages of the synthesis call."""
    parts = [f"Question:\n{query}", f"Tool calls and results:\n{format_trace(result)}"]
    if result.interrupts:
        added = "\n".join(f"- {text}" for text in result.interrupts)
        parts.append(f"While the work was running, the user added:\n{added}")
    if result.answer:
        parts.append(f"Draft answer:\n{cut(result.answer, 4 * SYNTHESIS_RESULT_LIMIT)}")
    if result.stop_reason == "max_iterations":
        parts.append("The assistant ran out of steps before finishing; answer with what is known.")
    parts.append("Write the final answer now.")
    return [ChatMessage.system(system_prompt), ChatMessage.user("\n\n".join(parts))]


def max_iterations_summary(result_steps: list[StepRecord], max_iterations: int) -> str:
    """The safety-net answer when the loop ended without a final answer."""
    if not result_steps:
        return (f"I stopped after {max_iterations} iterations without reaching a final answer, "
                "and no tools were called.")
    lines = [(f"I stopped after {max_iterations} iterations without reaching a final answer. "
              "Tool calls made:")]
    for number, step in enumerate(result_steps, 1):
        status = "succeeded" if step.error is None else f"failed: {cut(step.error, 200)}"
        lines.append(f"{number}. {step.tool} — {status}")
    return "\n".join(lines)
