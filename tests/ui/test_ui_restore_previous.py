"""A file the agent replaced can be put back from the write_file card, live and after the
chat is reopened; a second click undoes the first."""

from __future__ import annotations

from pathlib import Path

import pytest
from ui_helpers import make_window, wait_for

from desktop_app.core.config.settings import Settings, ToolsSettings
from desktop_app.core.llm.testing import ScriptedLLM, json_action, json_final
from desktop_app.core.tools.base import ToolRegistry
from desktop_app.core.tools.builtin.files import file_tools
from desktop_app.core.tools.sandbox import Workspace
from desktop_app.ui.confirm_dialog import ConfirmDialog

pytestmark = pytest.mark.gui


def test_a_replaced_file_is_put_back_from_its_card(qtbot, loop, tmp_path: Path) -> None:
    folder = tmp_path / "ws"
    folder.mkdir()
    todo = folder / "todo.md"
    todo.write_text("- call the bank\n")
    llm = ScriptedLLM([json_action("write_file", {"path": "todo.md", "content": "- nothing\n"}),
                       json_final("done"), "I replaced todo.md."], model_id="scripted")
    settings = Settings(tools=ToolsSettings(workspace=str(folder)))

    async def scenario():
        window = await make_window(
            qtbot, llm, settings=settings,
            tools_factory=lambda _s: ToolRegistry(file_tools(Workspace(folder))))
        await window.send("Replace my todo list with nothing.")
        await wait_for(lambda: window.findChildren(ConfirmDialog))
        window.findChildren(ConfirmDialog)[0].allow_button.click()
        await window.controller.wait_idle()
        assert todo.read_text() == "- nothing\n"
        card = window.chat.items()[-1].cards[0]
        await wait_for(lambda: bool(card.actions))
        [button] = card.actions
        assert button.text() == "Restore the previous version"
        button.click()
        await wait_for(lambda: todo.read_text() == "- call the bank\n")
        await wait_for(lambda: "click to undo" in button.text())
        button.click()  # undo
        await wait_for(lambda: todo.read_text() == "- nothing\n")
        # Reopened, the card still offers it.
        conv_id = window.conversation_id
        window.new_conversation()
        await window.open_conversation(conv_id)
        again = window.chat.items()[-1].cards[0]
        await wait_for(lambda: bool(again.actions))
        again.actions[0].click()
        await wait_for(lambda: todo.read_text() == "- call the bank\n")

    loop.run_until_complete(scenario())
