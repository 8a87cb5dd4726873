"""The versions an edit or a regenerate kept, in the window: "‹ 2/3 ›" beside a question
with more than one version, and switching between them (``core/store/branches.py``)."""

from __future__ import annotations

from typing import Any

from desktop_app.ui.message_widgets import UserMessage


class BranchSwitcher:
    """Marks the questions that have versions and swaps versions on request."""

    def __init__(self, window: Any) -> None:
        self.window = window

    async def _positions(self, conversation_id: str) -> list[int]:
        """Message ids of the conversation in order (a fork is an index into this)."""
        messages = await self.window.ctx.store.list_messages(conversation_id)
        return [m.id for m in messages]

    async def show(self) -> None:
        window = self.window
        conversation_id = window.conversation_id
        if conversation_id is None:
            return
        forks = await window.ctx.store.forks(conversation_id)
        ids = await self._positions(conversation_id) if forks else []
        questions = {w.message_id: w for w in window.chat.items()
                     if isinstance(w, UserMessage) and w.message_id is not None}
        for widget in questions.values():
            widget.set_versions(1, 1)
        for fork in forks:
            if fork.index < len(ids) and ids[fork.index] in questions:
                questions[ids[fork.index]].set_versions(fork.active, fork.total)

    async def switch(self, widget: UserMessage, version: int) -> None:
        """Show ``version`` of ``widget``'s question (not while an answer is written)."""
        window = self.window
        conversation_id = window.conversation_id
        if conversation_id is None or window.controller.active is not None:
            return
        ids = await self._positions(conversation_id)
        if widget.message_id not in ids:
            return
        await window.ctx.store.switch_branch(conversation_id, ids.index(widget.message_id),
                                             version)
        await window.open_conversation(conversation_id)
