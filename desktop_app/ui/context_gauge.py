"""The composer's context gauge: how full the model's window will be when you send.

The conversation part is counted once (off the Qt thread) whenever the conversation, the
model or the tools change; each keystroke only adds an estimate of the draft.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from PySide6.QtWidgets import QLabel, QWidget

if TYPE_CHECKING:
    from desktop_app.core.llm.registry import ModelEntry
    from desktop_app.core.store.records import Message
    from desktop_app.core.tools.base import ToolRegistry


class ContextGauge(QLabel):
    """``Context 1.2k / 8k`` in the composer's corner; warns as the window fills up."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("Muted")
        self.base: int | None = None
        self.limit = 0
        self.level = "ok"
        self.hide()

    def set_base(self, base: int | None, limit: int, draft: str = "") -> None:
        """The request's tokens before the draft (None: no model, nothing to show)."""
        self.base, self.limit = base, limit
        self.update_draft(draft)

    def update_draft(self, draft: str) -> None:
        from desktop_app.core.context.gauge import ContextFill

        if self.base is None or self.limit <= 0:
            self.hide()
            return
        fill = ContextFill.with_draft(self.base, draft, self.limit)
        self.setText(fill.label() + (" — nearly full" if fill.level == "full" else ""))
        self.setToolTip(fill.explanation())
        if fill.level != self.level:
            self.level = fill.level
            self.setObjectName("Warning" if fill.level == "full" else "Muted")
            self.style().unpolish(self)
            self.style().polish(self)
        self.show()


async def measure_base(messages: Sequence[Message], tools: ToolRegistry) -> int:
    """Estimated tokens of the next request without the draft, counted in a worker thread."""

    def count() -> int:
        from desktop_app.core.agent.prompts import DEFAULT_SYSTEM_PROMPT, native_system_prompt
        from desktop_app.core.context.gauge import base_tokens
        from desktop_app.core.store.history import to_chat_messages

        return base_tokens(to_chat_messages(messages),
                           system_prompt=native_system_prompt(DEFAULT_SYSTEM_PROMPT, tools),
                           tool_specs=tools.specs())

    return await asyncio.to_thread(count)


async def refresh(composer: Any, ctx: Any, entry: ModelEntry | None,
                  current: Callable[[], str | None]) -> None:
    """Recount the open conversation (``current()``) for ``composer.gauge``; a switch of
    conversation meanwhile leaves the gauge to the newer count."""
    conversation_id = current()
    if entry is None:
        composer.gauge.set_base(None, 0)
        return
    messages = await ctx.store.list_messages(conversation_id) if conversation_id else []
    base = await measure_base(messages, ctx.tools())
    if conversation_id == current():
        composer.gauge.set_base(base, entry.context_size, composer.text())
