"""Prompt text of the tool loop and the synthesis phase, and how observations are worded."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from desktop_app.core.llm.types import ChatMessage
from desktop_app.core.tools.base import Artifact, ToolRegistry

DEFAULT_SYSTEM_PROMPT = (
    "You are a helpful assistant running privately on the user's computer. Be accurate and "
    "concise. Use tools when they give a more reliable answer than memory (arithmetic, the "
    "current date and time, files); never invent tool results."
)

#: System prompt of a "conversation" synthesis (the loop's conversation, no tools offered).
#: No word about tools: told about them, the bundled 0.5B model printed a call as JSON
#: instead of answering.
ANSWER_SYSTEM_PROMPT = ("You are a helpful assistant running privately on the user's computer. "
                        "Be accurate and concise.")

JSON_MODE_INSTRUCTIONS = """\
{tools}

## How to reply
Reply with exactly ONE JSON object and no other text (no prose, no code fences).
To give the answer:
{{"type": "final_answer", "answer": "<the answer>", "reasoning": "<why>"}}
To use a tool:
{{"type": "tool_call", "tool": "{example_tool}", "args": {example_args}, "reasoning": "<why>"}}
If a tool can compute or look up what the user asks, call it first and answer only after \
you have its result; never guess what a tool would return. Use one tool per reply; its \
result comes back in the next message. Answer directly only when no tool fits."""

NATIVE_MODE_INSTRUCTIONS = (
    "Call the provided tools when they help; you may call several independent tools at once. "
    "When you have everything you need, reply with the answer as plain text."
)

#: Sent after output that was not the JSON the loop needs (SPEC §4, parse-error sentinel).
REFORMAT_INSTRUCTION = (
    "Your previous response could not be parsed as valid JSON. Reply again with exactly one "
    'JSON object: {"type": "tool_call", "tool": ..., "args": {...}, "reasoning": ...} or '
    '{"type": "final_answer", "answer": ..., "reasoning": ...}. No prose, no code fences.'
)

NEXT_ACTION_REMINDER = ("If this is what you needed, reply now with a final_answer JSON object; "
                        "otherwise reply with the next tool_call JSON object.")

#: Added when the model repeats the previous call exactly (small models loop like that).
REPEATED_CALL_NOTE = ("You already made exactly this call in your previous step and got the "
                      "same result. Do not repeat it: answer with final_answer, or try "
                      "something different.")

#: Marker for the parse-error sentinel in ``Action.reasoning``.
UNPARSED_REASONING = "(could not parse LLM output as JSON)"

#: What the model sees of a rich artifact instead of its source (SPEC §4). Worded so that a
#: small model that copies it into its answer says something true to the user, not the
#: engine's bookkeeping (it did copy the earlier "[Artifact generated: …] … do not repeat
#: its source" note word for word).
ARTIFACT_SUMMARY = "The user sees {name} in the preview pane."


def tool_catalog_for_json(registry: ToolRegistry) -> str:
    """The tool list for the JSON-mode system prompt: name, description, argument schema."""
    if not len(registry):
        return '## Tools\nNo tools are available: reply with a "final_answer" object.'
    lines = ["## Tools"]
    for tool in registry:
        schema = json.dumps(tool.parameters, ensure_ascii=False, separators=(",", ":"))
        lines.append(f"- {tool.name}: {tool.description}\n  args schema: {schema}")
    return "\n".join(lines)


def _example_args(parameters: Mapping[str, Any]) -> str:
    """A plausible ``args`` object for the format example (required string fields filled)."""
    props = parameters.get("properties", {})
    example: dict[str, Any] = {}
    for key in parameters.get("required", list(props)[:1]):
        spec = props.get(key, {})
        kind = spec.get("type") if isinstance(spec, dict) else None
        example[key] = {"integer": 1, "number": 1, "boolean": True, "array": [],
                        "object": {}}.get(kind or "string", "...")
    return json.dumps(example, ensure_ascii=False)


def json_system_prompt(base: str, registry: ToolRegistry) -> str:
    first = next(iter(registry), None)
    instructions = JSON_MODE_INSTRUCTIONS.format(
        tools=tool_catalog_for_json(registry),
        example_tool=first.name if first else "tool_name",
        example_args=_example_args(first.parameters) if first else "{}")
    return f"{base}\n\n{instructions}"


def native_system_prompt(base: str, registry: ToolRegistry | None = None) -> str:
    """The system turn of native mode: the base prompt, how to use tools, and what the
    offered tools ask the model to know (their ``prompt_hint``, each once)."""
    hints = dict.fromkeys(tool.prompt_hint for tool in registry or () if tool.prompt_hint)
    extra = "".join(f" {hint}" for hint in hints)
    return f"{base}\n\n{NATIVE_MODE_INSTRUCTIONS}{extra}"


def artifact_summary(artifacts: Sequence[Artifact]) -> str:
    """What the LLM sees instead of artifact sources."""
    lines = []
    for artifact in artifacts:
        if artifact.is_rich:
            lines.append(ARTIFACT_SUMMARY.format(name=artifact.name))
        else:
            lines.append(f"The user sees {artifact.name} ({artifact.mime_type}, "
                         f"{len(artifact.content)} characters).")
    return "\n".join(lines)


def cut(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters with a visible marker."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}\n… [cut: {len(text) - limit} more characters]"


def format_args(args: Any, limit: int = 500) -> str:
    try:
        text = json.dumps(args, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(args)
    return cut(text, limit)


def json_observation(tool: str, observation: str, error: str | None, *,
                     repeated: bool = False) -> str:
    """The user message carrying a tool result in JSON mode."""
    if error:
        body = f"Result of {tool}: ERROR: {error}"
        if observation:
            body += f"\n{observation}"
    else:
        body = f"Result of {tool}:\n{observation or '(no output)'}"
    return f"{body}\n\n{REPEATED_CALL_NOTE if repeated else NEXT_ACTION_REMINDER}"


def native_observation(observation: str, error: str | None) -> str:
    """The ``tool`` message content in native mode."""
    if error:
        return f"ERROR: {error}" + (f"\n{observation}" if observation else "")
    return observation or "(no output)"


def history_for_json(history: Sequence[ChatMessage]) -> list[ChatMessage]:
    """Earlier turns rewritten for JSON mode.

    Native tool messages become plain messages (a JSON-mode model gets no ``tools``
    parameter, and many chat templates reject ``tool`` messages without it), and earlier
    plain-text answers become ``final_answer`` objects: small models imitate the turns they
    see, so prose answers in the history lead to prose (unparseable) replies.
    """
    out: list[ChatMessage] = []
    for message in history:
        if message.role == "tool":
            out.append(ChatMessage.user(f"Result of {message.name or 'tool'}:\n"
                                        f"{message.content}", pinned=message.pinned))
        elif message.role == "assistant" and message.tool_calls:
            calls = [{"type": "tool_call", "tool": c.name, "args": _loads_or_raw(c.arguments)}
                     for c in message.tool_calls]
            text = "\n".join(json.dumps(c, ensure_ascii=False) for c in calls)
            out.append(ChatMessage.assistant(f"{message.content}\n{text}".strip()))
        elif message.role == "assistant" and not message.content.lstrip().startswith("{"):
            answer = {"type": "final_answer", "answer": message.content}
            out.append(message.model_copy(update={
                "content": json.dumps(answer, ensure_ascii=False)}))
        else:
            out.append(message)
    return out


def _loads_or_raw(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return text
