"""Reading ChatGPT's data export (``conversations.json``).

Each conversation there is a tree: ``mapping`` holds nodes ``{id, message, parent,
children}``, and an edited prompt or a regenerated answer starts a sibling branch.
``current_node`` is the leaf the user last saw, so we walk from it to the root and keep only
that branch — what the user would see when opening the chat.

Message shapes handled: ``text`` and ``multimodal_text`` parts (images become
``[image]``), the hidden system prompt and custom instructions (skipped), ``thoughts`` of
reasoning models (kept as the answer's reasoning), and tool use: an assistant message
addressed to a tool (``recipient`` not ``"all"``, e.g. code for ``python``) followed by the
tool's output (author role ``tool``) becomes a tool step of the next visible answer.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from desktop_app.core.errors import StorageError


@dataclass
class ImportedConversation:
    """A conversation parsed from an export, ready to be written to the store."""

    id: str | None
    title: str
    model: str | None
    mode: str
    created_at: float | None
    updated_at: float | None
    pinned: bool = False
    archived: bool = False
    #: ``add_message`` keyword dicts plus ``role``, ``content``, ``tool_steps``,
    #: ``artifacts`` and ``interrupt``.
    messages: list[dict[str, Any]] = field(default_factory=list)
    artifacts: list[dict[str, Any]] = field(default_factory=list)


def current_branch(mapping: dict[str, Any], current_node: str | None) -> list[dict[str, Any]]:
    """The nodes from the root to ``current_node`` (or to the newest leaf if it is missing)."""
    if not current_node or current_node not in mapping:
        roots = [n for n in mapping.values() if not n.get("parent") or n["parent"] not in mapping]
        if not roots:
            return []
        node = roots[0]
        while node.get("children"):  # no current node: follow the newest child
            node = mapping.get(node["children"][-1], {})
        current_node = node.get("id")
        if current_node not in mapping:
            return []
    branch = []
    seen: set[str] = set()
    node_id: str | None = current_node
    while node_id and node_id in mapping and node_id not in seen:
        seen.add(node_id)  # a corrupt file with a parent cycle must not loop forever
        branch.append(mapping[node_id])
        node_id = mapping[node_id].get("parent")
    return branch[::-1]


def _text(content: dict[str, Any]) -> str:
    kind = content.get("content_type", "text")
    if kind in ("text", "multimodal_text"):
        parts = []
        for part in content.get("parts") or []:
            if isinstance(part, str):
                parts.append(part)
            elif isinstance(part, dict):
                parts.append("[image]" if "image" in str(part.get("content_type", "")) else
                             str(part.get("text") or "[attachment]"))
        return "\n".join(p for p in parts if p)
    if kind in ("code", "execution_output", "tether_quote"):
        return str(content.get("text") or "")
    if kind == "tether_browsing_display":
        return str(content.get("result") or "")
    return ""


def _thoughts(content: dict[str, Any]) -> str:
    if content.get("content_type") != "thoughts":
        return ""
    return "\n\n".join(
        "\n".join(x for x in (t.get("summary"), t.get("content")) if x)
        for t in content.get("thoughts") or [] if isinstance(t, dict))


def parse_chatgpt_conversation(item: dict[str, Any]) -> ImportedConversation:
    """One entry of ``conversations.json`` -> an ``ImportedConversation``."""
    mapping = item.get("mapping")
    if not isinstance(mapping, dict):
        raise StorageError("The ChatGPT conversation has no 'mapping' tree.")
    default_model = item.get("default_model_slug")
    messages: list[dict[str, Any]] = []
    steps: list[dict[str, Any]] = []
    reasoning: list[str] = []
    for node in current_branch(mapping, item.get("current_node")):
        msg = node.get("message")
        if not isinstance(msg, dict):
            continue  # the root node has no message
        role = (msg.get("author") or {}).get("role")
        content = msg.get("content") or {}
        meta = msg.get("metadata") or {}
        created = msg.get("create_time") or item.get("create_time")
        if meta.get("is_visually_hidden_from_conversation") or \
                content.get("content_type") == "user_editable_context":
            continue
        if role == "assistant" and _thoughts(content):
            reasoning.append(_thoughts(content))
            continue
        text = _text(content)
        recipient = msg.get("recipient") or "all"
        if role == "assistant" and recipient != "all":
            steps.append({"iteration": len(steps) + 1, "tool": recipient, "args": _args(text),
                          "observation": "", "error": None, "elapsed": None,
                          "created_at": created, "artifacts": []})
            continue
        if role == "tool":
            name = (msg.get("author") or {}).get("name") or "tool"
            open_step = next((s for s in reversed(steps)
                              if s["tool"] == name and not s["observation"]), None)
            if open_step is None:
                open_step = {"iteration": len(steps) + 1, "tool": name, "args": {},
                             "observation": "", "error": None, "elapsed": None,
                             "created_at": created, "artifacts": []}
                steps.append(open_step)
            open_step["observation"] = text
            if (meta.get("aggregate_result") or {}).get("status") == "failed_with_in_kernel_exception":
                open_step["error"] = "the code raised an exception"
            continue
        if role not in ("user", "assistant", "system") or (not text.strip() and role != "assistant"):
            continue
        if role == "assistant" and not text.strip() and not steps:
            continue
        entry: dict[str, Any] = {
            "role": role, "content": text, "created_at": created,
            "model": (meta.get("model_slug") or default_model) if role == "assistant" else None,
            "tool_steps": [], "artifacts": [], "interrupt": None,
        }
        if role == "assistant":
            entry["tool_steps"], steps = steps, []
            entry["reasoning"] = "\n\n".join(reasoning) or None
            reasoning = []
            if msg.get("status") not in (None, "finished_successfully"):
                entry["status"] = "interrupted"
        messages.append(entry)
    if steps:  # tool use at the very end, with no answer after it
        messages.append({"role": "assistant", "content": "", "created_at": None,
                         "model": default_model, "tool_steps": steps, "artifacts": [],
                         "interrupt": None, "status": "interrupted"})
    return ImportedConversation(
        id=item.get("conversation_id") or item.get("id"),
        title=str(item.get("title") or ""), model=default_model, mode="react",
        created_at=item.get("create_time"), updated_at=item.get("update_time"),
        archived=bool(item.get("is_archived")), messages=messages)


def _args(text: str) -> Any:
    """A tool call's payload: JSON if it is JSON (browsing), else code or text."""
    try:
        value = json.loads(text)
        return value if isinstance(value, dict) else {"input": value}
    except ValueError:
        return {"code": text}
