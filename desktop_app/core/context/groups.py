"""Splitting a conversation into the units compaction keeps or drops whole.

An assistant message with ``tool_calls`` and the ``tool`` messages answering it form one
atomic group: providers reject a tool result without the call that asked for it, and a call
without its results. Every other message is a group of its own. Leading system messages are
the head and always stay.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from desktop_app.core.context.prompts import is_summary
from desktop_app.core.context.tokens import TokenCounter
from desktop_app.core.llm.types import ChatMessage

GroupKind = Literal["message", "tools", "summary", "broken"]


@dataclass
class Group:
    """Consecutive messages compaction keeps or removes together."""

    messages: list[ChatMessage]
    kind: GroupKind
    tokens: int = 0

    @property
    def pinned(self) -> bool:
        """Pinned groups are never removed (the user's query, user interrupts)."""
        return any(m.pinned for m in self.messages)

    @property
    def keepable(self) -> bool:
        """Whether keeping this group verbatim yields a valid prompt.

        A broken group (a tool result whose call is missing, or a call missing some of its
        results) would make the provider reject the request, so it is only ever summarised.
        Earlier summaries are always merged into the new one, never kept beside it.
        """
        return self.kind in ("message", "tools")


def split_head(messages: Sequence[ChatMessage]) -> tuple[list[ChatMessage], list[ChatMessage]]:
    """(leading system messages, the rest)."""
    index = 0
    while index < len(messages) and messages[index].role == "system":
        index += 1
    return list(messages[:index]), list(messages[index:])


def split_groups(messages: Sequence[ChatMessage], counter: TokenCounter) -> list[Group]:
    """The atomic groups of ``messages`` (no head), in order, with token counts."""
    groups: list[Group] = []
    index = 0
    while index < len(messages):
        message = messages[index]
        if message.role == "assistant" and message.tool_calls:
            wanted = {call.id for call in message.tool_calls}
            members = [message]
            answered: set[str] = set()
            index += 1
            while (index < len(messages) and messages[index].role == "tool"
                   and messages[index].tool_call_id in wanted - answered):
                answered.add(messages[index].tool_call_id or "")
                members.append(messages[index])
                index += 1
            kind: GroupKind = "tools" if answered == wanted else "broken"
            groups.append(Group(members, kind))
            continue
        if message.role == "tool":
            kind = "broken"  # a result without the call that asked for it
        elif is_summary(message):
            kind = "summary"
        else:
            kind = "message"
        groups.append(Group([message], kind))
        index += 1
    for group in groups:
        group.tokens = sum(counter.count_message(m) for m in group.messages)
    return groups
