"""Prompts for the compaction LLM, one per hint, and the shape of the summary message.

A hint tells the summariser what matters for the caller: inside the tool loop
(``react_iteration``) the goal, the recent reasoning chain and exact data; for a loaded chat
history (``general``) the conversation's facts and open questions; for DAG step results
(``step_dependency``) each step's result values.
"""

from __future__ import annotations

import json
import re
from typing import Literal

from desktop_app.core.llm.types import ChatMessage

Hint = Literal["react_iteration", "general", "step_dependency"]

_COMMON_RULES = """\
Rules:
- Copy exact values verbatim: numbers, amounts, dates, names, identifiers, file paths, URLs,
  error messages. Never round or paraphrase them.
- Do not invent anything that is not in the text.
- If a previous summary is given, merge it into your new summary: the result must replace
  both, so keep everything from it that still matters.
- Write plain sentences or short bullet points: no JSON, no code blocks, no preamble, no
  closing remarks.
- Stay within {max_words} words."""

HINT_PROMPTS: dict[str, str] = {
    "react_iteration": """\
You compress the working memory of a tool-using assistant in the middle of a task. The
assistant will continue the task from your summary, so it must be able to act on it.
Keep:
- the user's goal and any constraints or corrections the user gave;
- the recent chain of reasoning: what was tried, what each tool call returned, what failed
  and why, and what the assistant planned to do next;
- every exact number, name and value found so far.
Drop pleasantries, repetition and raw output beyond the values that matter.
""" + _COMMON_RULES,
    "general": """\
You summarise the earlier part of a conversation between a user and an assistant so the
conversation can continue without it.
Keep:
- the topics discussed, questions asked and the answers given;
- facts, preferences and decisions the user stated;
- open questions and promised follow-ups.
Drop greetings, repetition and filler.
""" + _COMMON_RULES,
    "step_dependency": """\
You condense the results of earlier steps of a plan for a later step that depends on them.
Keep for every step its task in a few words and its result values (the data, not the
process); note steps that failed and why.
Drop intermediate reasoning and tool chatter.
""" + _COMMON_RULES,
}

#: The summary message is a user message carrying this ``name``; providers never see
#: ``name`` on non-tool messages, so it is a safe, invisible marker.
SUMMARY_NAME = "context_summary"
SUMMARY_TITLE = "[Summary of earlier conversation"
_COUNT = re.compile(r"— (\d+) messages condensed")


def hint_prompt(hint: str, max_words: int) -> str:
    """The system prompt for the compaction LLM for ``hint``; ValueError for unknown hints."""
    try:
        template = HINT_PROMPTS[hint]
    except KeyError:
        raise ValueError(
            f"unknown compaction hint {hint!r}; use one of {sorted(HINT_PROMPTS)}") from None
    return template.format(max_words=max(20, max_words))


def summary_message(body: str, compacted_messages: int) -> ChatMessage:
    """The single message that stands for ``compacted_messages`` earlier messages."""
    content = (f"{SUMMARY_TITLE} — {compacted_messages} messages condensed to fit the context "
               f"window]\n{body.strip()}")
    return ChatMessage(role="user", content=content, name=SUMMARY_NAME)


def is_summary(message: ChatMessage) -> bool:
    """Whether ``message`` is a compaction summary made by the ContextGuard."""
    return message.name == SUMMARY_NAME and message.role != "tool"


def condensed_count(messages: list[ChatMessage]) -> int:
    """How many original messages ``messages`` stand for: an earlier summary counts the
    messages it condensed, so the number in the title grows across rounds."""
    total = 0
    for message in messages:
        match = _COUNT.search(message.content.partition("\n")[0]) if is_summary(message) else None
        total += int(match.group(1)) if match else 1
    return total


def summary_body(message: ChatMessage) -> str:
    """The summary text of a summary message, without its title line."""
    first, _, rest = message.content.partition("\n")
    return rest if first.startswith(SUMMARY_TITLE) else message.content


def _json_action_text(content: str) -> str | None:
    """A JSON-mode action (``{"type": "tool_call", ...}``) as a plain sentence, else None.

    Small models shown raw JSON actions tend to answer with another JSON action instead of
    a summary, so the transcript describes them in words.
    """
    text = content.strip()
    if not (text.startswith("{") and text.endswith("}")):
        return None
    try:
        action = json.loads(text)
    except ValueError:
        return None
    if not isinstance(action, dict):
        return None
    reasoning = f" (reasoning: {action['reasoning']})" if action.get("reasoning") else ""
    if action.get("type") == "tool_call":
        args = json.dumps(action.get("args", {}), ensure_ascii=False)
        return f"called tool {action.get('tool')} with {args}{reasoning}"
    if action.get("type") == "final_answer":
        return f"answered: {action.get('answer')}{reasoning}"
    return None


def render_message(message: ChatMessage) -> str:
    """One message as a transcript line for the summariser."""
    if is_summary(message):
        return f"(earlier summary)\n{summary_body(message)}"
    if message.role == "tool":
        return f"[tool result {message.name or message.tool_call_id or ''}]\n{message.content}"
    label = "user (pinned)" if message.pinned else message.role
    content = message.content
    if message.role == "assistant":
        content = _json_action_text(content) or content
    text = f"[{label}]\n{content}" if content else f"[{label}]"
    for call in message.tool_calls:
        text += f"\n→ calls {call.name}({call.arguments})"
    return text


def compaction_request(*, goal: str, previous_summary: str, transcript: str) -> str:
    """The user message of one compaction call."""
    parts = []
    if goal:
        parts.append(f"The user's request (kept verbatim elsewhere; for orientation):\n{goal}")
    if previous_summary:
        parts.append(f"Previous summary (merge it in):\n{previous_summary}")
    parts.append(f"Conversation excerpt to summarise:\n{transcript}")
    parts.append("Write the summary now, in plain sentences.")
    return "\n\n".join(parts)
