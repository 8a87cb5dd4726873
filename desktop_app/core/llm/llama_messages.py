"""Messages, tools and grammars in the form a GGUF chat template and llama.cpp expect.

Two wire forms:

* **native** (the template knows tools, see ``tool_format.detect_tool_style``): ``tool``
  messages and assistant ``tool_calls`` are passed as they are, with arguments decoded to
  objects, because templates render them with ``| tojson``; the tools go to the template in
  a compact form (small models pay for every prompt token: about 100 tokens a second here).
* **plain** (no tool support in the template): tool results become user messages and calls
  become JSON text, which every template can render.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from desktop_app.core.llm.base import ToolSpec
from desktop_app.core.llm.tool_format import ToolStyle
from desktop_app.core.llm.types import ChatMessage

#: Schema keywords that constrain values but tell a model little; left out of the prompt.
_NOISE_KEYS = frozenset({"additionalProperties", "minLength", "maxLength", "minItems",
                         "maxItems", "title", "$schema", "examples"})


#: A reply that must be text, not a call (tool_choice "none" with the tools still in the
#: template): no JSON, tag or fence may start it, and no brace or tag may appear in it.
#: Tested on the bundled model: without it, the reply after a tool result is another call
#: in 4 of 4 cases; a first-token ban alone gave "({...})" call text after one character.
TEXT_ONLY_GRAMMAR = r'root ::= [^{<\[` \t\n] [^{<]*'


def plain_message(message: ChatMessage) -> dict[str, Any]:
    """Wire form for a template that may not know tool roles or tool calls."""
    if message.role == "tool":
        label = f"Result of tool '{message.name}'" if message.name else "Tool result"
        return {"role": "user", "content": f"[{label}]\n{message.content}"}
    content = message.content
    if message.role == "assistant" and message.tool_calls:
        calls = "\n".join(f'{{"tool": {json.dumps(c.name)}, "args": {c.arguments or "{}"}}}'
                          for c in message.tool_calls)
        content = f"{content}\n{calls}".strip()
    return {"role": message.role, "content": content}


def _decoded(arguments: str) -> Any:
    try:
        return json.loads(arguments) if arguments.strip() else {}
    except ValueError:
        return arguments  # shown as the string it was; the model sees what it wrote


def native_message(message: ChatMessage) -> dict[str, Any]:
    """Wire form for a template with tool support (tool roles, calls with object arguments)."""
    out: dict[str, Any] = {"role": message.role, "content": message.content}
    if message.role == "assistant" and message.tool_calls:
        out["tool_calls"] = [
            {"id": c.id, "type": "function",
             "function": {"name": c.name, "arguments": _decoded(c.arguments)}}
            for c in message.tool_calls]
    if message.role == "tool":
        out["tool_call_id"] = message.tool_call_id or ""
        if message.name:
            out["name"] = message.name
    return out


def compact_schema(schema: Any) -> Any:
    """``schema`` without the keywords in ``_NOISE_KEYS`` (recursively), ``required``
    before ``properties``: written after them, small models continued their arguments with
    it (``{"expression": "98765 / 43", "required": ["expression"]}``)."""
    if isinstance(schema, dict):
        keys = sorted(schema, key=lambda k: (k != "type", k != "required"))
        out = {}
        for key in keys:
            if key in ("properties", "patternProperties", "$defs", "definitions"):
                # Names here are the tool's own (a property may be called "title" or
                # "default"): only their schemas are compacted. Dropping a "title"
                # property hid it from the model, which then never sent the required title
                # of note_create, make_table and make_report.
                value = schema[key]
                out[key] = ({name: compact_schema(sub) for name, sub in value.items()}
                            if isinstance(value, dict) else value)
            elif key not in _NOISE_KEYS:
                out[key] = compact_schema(schema[key])
        return out
    if isinstance(schema, list):
        return [compact_schema(v) for v in schema]
    return schema


def compact_tools(tools: list[ToolSpec]) -> list[ToolSpec]:
    """Tool specs as the template shows them: same names and meaning, fewer tokens."""
    out = []
    for spec in tools:
        function = spec.get("function", spec)
        out.append({"type": "function", "function": {
            "name": function.get("name", ""),
            "description": function.get("description", ""),
            "parameters": compact_schema(function.get("parameters") or
                                         {"type": "object", "properties": {}})}})
    return out


def forced_tool(tools: list[ToolSpec] | None, tool_choice: Any) -> ToolSpec | None:
    """The tool a ``tool_choice`` of ``{"type": "function", "function": {"name": ...}}`` forces."""
    if not tools or not isinstance(tool_choice, dict):
        return None
    name = (tool_choice.get("function") or {}).get("name")
    return next((t for t in tools if t.get("function", {}).get("name") == name), None)


def _call_wrapper(style: ToolStyle | None) -> tuple[str, str]:
    """The text around one call's JSON in the model's trained format."""
    if style == "hermes":
        return "<tool_call>\n", "\n</tool_call>"
    if style == "mistral":
        return "[TOOL_CALLS][", "]"
    return "", ""


def any_call_grammar(tools: list[ToolSpec], style: ToolStyle | None) -> str:
    """GBNF for exactly one call of any of ``tools`` (``tool_choice="required"``): the model
    picks the tool, and its arguments must match that tool's schema."""
    from llama_cpp.llama_grammar import json_schema_to_gbnf

    alternatives = [{
        "type": "object",
        "properties": {
            "name": {"const": tool["function"]["name"]},
            "arguments": tool["function"].get("parameters")
            or {"type": "object", "properties": {}}},
        "required": ["name", "arguments"]} for tool in tools]
    schema = alternatives[0] if len(alternatives) == 1 else {"anyOf": alternatives}
    call_gbnf = json_schema_to_gbnf(json.dumps(schema))
    call_gbnf = re.sub(r"(?m)^root\s*::=", "one-call ::=", call_gbnf)
    opening, closing = _call_wrapper(style)
    return f"root ::= {json.dumps(opening)} one-call {json.dumps(closing)}\n{call_gbnf}"


def name_choice_grammar(names: Sequence[str], style: ToolStyle | None) -> str:
    """GBNF for the opening of one call, in the model's own format, up to its name, which
    must be one of ``names``."""
    opening = _call_wrapper(style)[0] + '{"name": "'
    choices = " | ".join(json.dumps(name) for name in names)
    closing_quote = json.dumps('"')
    return f"root ::= {json.dumps(opening)} ({choices}) {closing_quote}\n"


def forced_call_grammar(tool: ToolSpec, style: ToolStyle | None) -> str:
    """GBNF for exactly one call of ``tool`` in the model's own format.

    Decoding is constrained to the trained wrapper (``<tool_call>`` for Hermes-style
    models) around arguments that match the tool's schema, so a forced call can never be
    unparseable or miss a required argument.
    """
    from llama_cpp.llama_grammar import json_schema_to_gbnf

    function = tool["function"]
    schema = function.get("parameters") or {"type": "object", "properties": {}}
    args_gbnf = json_schema_to_gbnf(json.dumps(schema))
    args_gbnf = re.sub(r"(?m)^root\s*::=", "call-arguments ::=", args_gbnf)
    name = json.dumps(function["name"])
    head = '{"name": ' + name + ', "arguments": '
    if style == "hermes":
        opening, closing = "<tool_call>\n" + head, "}\n</tool_call>"
    elif style == "mistral":
        opening, closing = "[TOOL_CALLS][" + head, "}]"
    else:
        opening, closing = head, "}"
    return (f"root ::= {json.dumps(opening)} call-arguments {json.dumps(closing)}\n"
            f"{args_gbnf}")

