"""Phase 2: the synthesis prompt built from a run's trace (SPEC §4).

The user message holds the original question, every tool call with its result (cut to
``SYNTHESIS_RESULT_LIMIT`` characters), every user interrupt of the run, and the loop's
brief answer. It is the same in JSON and native mode because it is built from
``AgentResult.steps``, not from the mode-specific message history.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from desktop_app.core.agent.prompts import cut, format_args
from desktop_app.core.agent.result import AgentResult, StepRecord
from desktop_app.core.llm.base import LLM
from desktop_app.core.llm.json_extract import extract_json
from desktop_app.core.llm.types import ChatMessage

SYNTHESIS_RESULT_LIMIT = 2_000
#: Tighter per-result limits tried, in order, when the prompt does not fit the model's window.
_FALLBACK_LIMITS = (1_000, 500, 200, 80)
#: Earlier turns shown to the synthesiser so follow-up questions ("and for 3 people?") make
#: sense: the last few messages, each cut short.
HISTORY_MESSAGES = 6
HISTORY_MESSAGE_CHARS = 600

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


def _readable(message: ChatMessage) -> str:
    """An earlier message as a person would read it (JSON-mode answers unwrapped)."""
    text = message.content.strip()
    if message.role == "assistant" and text.startswith("{"):
        data = extract_json(text)
        answer = data.get("answer") if data else None
        if isinstance(answer, str):
            return answer
    return text


def earlier_conversation(result: AgentResult, max_messages: int = HISTORY_MESSAGES,
                         max_chars: int = HISTORY_MESSAGE_CHARS) -> str:
    """The turns before this run's question, newest last, or "" for a first question."""
    history: Sequence[ChatMessage] = result.messages
    for index, message in enumerate(result.messages):
        if message.role == "user" and message.pinned and message.content == result.query:
            history = result.messages[:index]
            break
    else:
        return ""
    lines = []
    for message in history:
        if message.role not in ("user", "assistant") or message.tool_calls:
            continue
        text = _readable(message)
        if not text or text.startswith("Result of "):  # JSON-mode tool observations
            continue
        speaker = "User" if message.role == "user" else "Assistant"
        lines.append(f"{speaker}: {cut(text, max_chars)}")
    return "\n".join(lines[-max_messages:])


def synthesis_messages(query: str, result: AgentResult,
                       system_prompt: str = SYNTHESIS_SYSTEM_PROMPT, *,
                       limit: int = SYNTHESIS_RESULT_LIMIT,
                       with_history: bool = True) -> list[ChatMessage]:
    """The two messages of the synthesis call; ``limit`` cuts each tool result."""
    parts = [f"Question:\n{query}", f"Tool calls and results:\n{format_trace(result, limit)}"]
    earlier = earlier_conversation(result) if with_history else ""
    if earlier:
        parts.insert(0, f"Earlier in this conversation (context only):\n{earlier}")
    if result.interrupts:
        added = "\n".join(f"- {text}" for text in result.interrupts)
        parts.append(f"While the work was running, the user added:\n{added}")
    if result.answer:
        parts.append(f"Draft answer:\n{cut(result.answer, 4 * limit)}")
    if result.stop_reason == "max_iterations":
        parts.append("The assistant ran out of steps before finishing; answer with what is known.")
    parts.append("Write the final answer now.")
    return [ChatMessage.system(system_prompt), ChatMessage.user("\n\n".join(parts))]


def fitted_synthesis_messages(llm: LLM, query: str, result: AgentResult,
                              system_prompt: str = SYNTHESIS_SYSTEM_PROMPT,
                              max_tokens: int | None = None) -> list[ChatMessage]:
    """``synthesis_messages`` made to fit ``llm``'s window with room for the answer.

    Small local models have 2–8K windows; a run with many tool results would otherwise make
    synthesis fail with a context overflow. Results are cut harder step by step, then the
    earlier conversation goes, and as a last resort the whole trace is cut to fit.
    """
    # Imported here: core.context imports the agent's event models.
    from desktop_app.core.context.guard import default_output_reserve
    from desktop_app.core.context.tokens import TokenCounter
    from desktop_app.core.context.truncation import truncate_text

    counter = TokenCounter(llm)
    reserve = max_tokens or default_output_reserve(llm.context_size)
    budget = max(llm.context_size - reserve, llm.context_size // 2)
    messages = synthesis_messages(query, result, system_prompt)
    if counter.count_messages(messages) <= budget:
        return messages
    for with_history in (True, False):
        for limit in _FALLBACK_LIMITS:
            messages = synthesis_messages(query, result, system_prompt, limit=limit,
                                          with_history=with_history)
            if counter.count_messages(messages) <= budget:
                return messages
    system, user = messages
    room = budget - counter.count_messages([system, user.model_copy(update={"content": ""})])
    return [system, user.model_copy(update={
        "content": truncate_text(user.content, max(room, 64), counter)})]


#: The last message of a synthesis that continues the loop's own conversation. Short and
#: plain on purpose: given a longer list of rules, the bundled 0.5B model answered with a
#: word from the rules ("Markdown") instead of the result. Chosen among six wordings on the
#: arithmetic, percentage, unit and date tasks (bundled model, greedy, 2026-12-03):
#: this one 21/26; "Now answer my question using these results." 17/26 (its date answers
#: were plans: "I will use the current_time function…"); "… in one or two sentences. Do not
#: call a tool." 20/26; the question repeated 21/26 but longer.
CONTINUE_INSTRUCTION = "Give the answer to my question from the results above, in one sentence."


#: The same after a tool that read something (a file, a note, a document): no length set,
#: since a summary or a list needs more than a sentence, and the question quoted, since
#: without the cap the bundled model read "my question" as the chat's first question.
#: After tools that compute or make something the sentence stays: uncapped, the model
#: echoed the request or copied a table it had made (dev split).
READ_INSTRUCTION = "Give the answer to my question from the results above.\nMy question: {query}"


#: After a tool made or changed something (a note, a table, a file): what was done, not "the
#: answer to my question", which the bundled model answered by saying the request back
#: ("The answer to calculate 15% of 240 and save the result in a note titled 'Tip' is 36.").
#: "what you did", not "what was done": with the latter it wrote of "the user" ("The user
#: asked for a table of the first four planets…"), with this "I made a table of…" (dev).
MADE_INSTRUCTION = "Tell me in one sentence what you did, with any result I asked for."


#: The quoted question is cut: a pasted log would not fit the model's window twice.
QUOTED_QUESTION_CHARS = 600


def _read_something(step: StepRecord) -> bool:
    return step.ok and not (step.computed or step.made_something)


def _instruction(result: AgentResult) -> str:
    steps = result.steps
    if any(step.made_something for step in steps):
        instruction = MADE_INSTRUCTION
    elif any(map(_read_something, steps)):
        instruction = READ_INSTRUCTION.format(query=cut(result.query, QUOTED_QUESTION_CHARS))
    else:
        instruction = CONTINUE_INSTRUCTION
    if result.interrupts:
        added = "\n".join(f"- {text}" for text in result.interrupts)
        instruction += f"\nAlso answer what I added while you worked:\n{added}"
    if result.stop_reason == "max_iterations":
        instruction += "\nYou ran out of steps: answer with what is known, and say what is missing."
    return instruction


def _fits(llm: LLM, messages: list[ChatMessage], tools: list[dict[str, Any]] | None,
          max_tokens: int | None) -> bool:
    from desktop_app.core.context.guard import default_output_reserve
    from desktop_app.core.context.tokens import TokenCounter

    counter = TokenCounter(llm)
    reserve = max_tokens or default_output_reserve(llm.context_size)
    used = counter.count_messages(messages) + counter.count_tools(tools)
    return used <= llm.context_size - reserve


def continuation_messages(llm: LLM, result: AgentResult, max_tokens: int | None = None, *,
                          system_prompt: str | None = None) -> list[ChatMessage] | None:
    """The loop's own conversation (calls and results as the model made and saw them) plus
    one instruction: a local model's KV cache covers everything but the instruction when
    ``system_prompt`` is None (the loop's system turn, tools included, is kept). With a
    ``system_prompt`` the conversation is the same but no tools are offered, which small
    models need to answer in text at all. None when it does not fit the model's window."""
    body = list(result.messages)
    if system_prompt is not None and body and body[0].role == "system":
        body[0] = ChatMessage.system(system_prompt)
    messages = [*body, ChatMessage.user(_instruction(result))]
    tools = result.loop_tools if system_prompt is None else None
    return messages if _fits(llm, messages, tools, max_tokens) else None


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
