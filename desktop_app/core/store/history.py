"""Stored messages -> the engine's ``ChatMessage`` history.

A stored conversation can hold things a provider rejects in a request: an answer a crash
cut off before its first token, a failed call's empty message, a ``tool`` message whose
assistant ``tool_calls`` message is gone, or ``tool_calls`` whose results never arrived
(the app was killed while a tool ran). Those are dropped or repaired here, so a reopened
conversation can always be continued.
"""

from __future__ import annotations

from collections.abc import Sequence

from desktop_app.core.llm.types import ChatMessage, ToolCall
from desktop_app.core.store.records import Message


def _tool_calls(message: Message) -> list[ToolCall]:
    calls = []
    for raw in message.tool_calls:
        try:
            calls.append(ToolCall(id=str(raw["id"]), name=str(raw["name"]),
                                  arguments=str(raw.get("arguments", "{}"))))
        except (KeyError, TypeError):
            continue  # a damaged record: drop the call, keep the conversation usable
    return calls


def to_chat_messages(messages: Sequence[Message]) -> list[ChatMessage]:
    """The history to continue a conversation with.

    - Interrupted answers keep what was streamed (the user saw it); empty ones are dropped,
      as are failed calls without content.
    - ``tool_calls`` are kept only if every call has its ``tool`` result right after it;
      ``tool`` messages are kept only when they answer such a call.
    """
    # Which tool_call ids are answered by the tool messages directly following each assistant.
    answered: dict[int, set[str]] = {}
    for i, msg in enumerate(messages):
        if msg.role == "assistant" and msg.tool_calls:
            ids: set[str] = set()
            for follower in messages[i + 1:]:
                if follower.role != "tool":
                    break
                if follower.tool_call_id:
                    ids.add(follower.tool_call_id)
            answered[msg.id] = ids

    out: list[ChatMessage] = []
    open_calls: set[str] = set()
    for msg in messages:
        if msg.role == "tool":
            if msg.tool_call_id in open_calls:
                out.append(ChatMessage(role="tool", content=msg.content,
                                       tool_call_id=msg.tool_call_id, name=msg.name))
            continue
        open_calls = set()
        calls = _tool_calls(msg) if msg.role == "assistant" else []
        if calls and not {c.id for c in calls} <= answered.get(msg.id, set()):
            calls = []  # results missing (crash mid-tool): keep the text, drop the calls
        if not msg.content.strip() and not calls and msg.role != "system":
            continue
        if msg.status == "error" and not msg.content.strip():
            continue
        open_calls = {c.id for c in calls}
        out.append(ChatMessage(role=msg.role, content=msg.content, tool_calls=calls,
                               reasoning_content=msg.reasoning, pinned=msg.pinned,
                               name=msg.name if msg.role != "assistant" else None))
    return out
