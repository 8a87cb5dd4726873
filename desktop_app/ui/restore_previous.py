"""The "Restore the previous version" button on a ``write_file`` card that replaced a file
(``core/tools/previous_versions``): one click puts the earlier content back, and the
replacement is kept in its turn, so the click can be undone the same way."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from desktop_app.ui.tool_card import ToolCard

_LABEL = "Restore the previous version"


def offer_restore(window: Any, card: ToolCard) -> None:
    """Add the button to ``card`` when it replaced a file whose previous version is kept."""
    if card.tool_name != "write_file" or card.status != "done" or card.restore_checked:
        return
    card.restore_checked = True  # asked once per card
    try:
        args = json.loads(card.args_text)
    except ValueError:
        return
    if not isinstance(args, dict) or args.get("append") or not args.get("path"):
        return
    window.spawn(_offer(window, card, str(args["path"])))


async def _offer(window: Any, card: ToolCard, path: str) -> None:
    from desktop_app.core.tools import previous_versions
    from desktop_app.core.tools.builtin.assistant import workspace_from_settings

    workspace = workspace_from_settings(window.ctx.settings)
    if workspace is None:
        return
    if await asyncio.to_thread(previous_versions.kept, workspace, path) is None:
        return
    button = card.add_action(_LABEL, lambda: window.spawn(_restore(card, button)))
    button.setToolTip(f"Put back '{path}' as it was before this change; its current content "
                      "is kept, so this can be undone the same way.")

    async def _restore(card: ToolCard, button: Any) -> None:
        button.setEnabled(False)
        try:
            restored = await asyncio.to_thread(previous_versions.restore, workspace, path)
        finally:
            button.setEnabled(True)
        button.setText(f"Restored '{restored}' — click to undo")
