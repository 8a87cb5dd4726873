"""The window asks once per chat before the user's files go to a model on another computer
(issue 25): "Keep local" keeps them (and the chat remembers it, also after a restart of the
run), "Allow for this chat" sends them. The model is a recording server on this computer's
LAN address, which the app treats as another computer."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from ui_helpers import make_window, wait_for

sys.path.insert(0, str(Path(__file__).parents[1] / "llm"))
from fake_openai_server import Reply, chunk, lan_server  # noqa: F401

from desktop_app.core.config.settings import Settings, ToolsSettings
from desktop_app.core.llm.openai_adapter import OpenAICompatibleLLM
from desktop_app.ui.confirm_dialog import ConfirmDialog

pytestmark = pytest.mark.gui
PASSWORD = "hunter2-xyzzy"


def _reads_the_file(server) -> None:
    call = {"id": "call_1", "type": "function",
            "function": {"name": "read_file", "arguments": json.dumps({"path": "secrets.env"})}}
    server.add(Reply(sse=[chunk(tool_calls=[{"index": 0, **call}], finish_reason="tool_calls")]),
               Reply(sse=[chunk("Keep it out of git.", finish_reason="stop")]),
               Reply(sse=[chunk("Keep it out of git.", finish_reason="stop")]))


def _settings(tmp_path: Path) -> Settings:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    (workspace / "secrets.env").write_text(f"db_password={PASSWORD}\n")
    # Few enough tools that no selection call comes first.
    return Settings(tools=ToolsSettings(workspace=str(workspace)))


async def _answer_share(qtbot, window, button: str) -> str:
    await wait_for(lambda: any(d.isVisible() for d in window.findChildren(ConfirmDialog)))
    [dialog] = [d for d in window.findChildren(ConfirmDialog) if d.isVisible()]
    from PySide6.QtWidgets import QPlainTextEdit

    [call] = dialog.findChildren(QPlainTextEdit)
    text = f"{dialog.change_label.text()}\n{call.toPlainText()}"
    assert dialog.windowTitle() == "Send your content off this computer?"
    assert not dialog.always_button.isVisible()
    (dialog.deny_button if button == "keep" else dialog.allow_button).click()
    return text


def test_keep_local_is_asked_once_and_remembered(qtbot, loop, lan_server, tmp_path) -> None:  # noqa: F811
    llm = OpenAICompatibleLLM(base_url=lan_server.base_url, model="hosted")

    async def scenario():
        window = await make_window(qtbot, llm, settings=_settings(tmp_path),
                                   tools_factory=_few_tools)
        _reads_the_file(lan_server)
        sending = window.spawn(window.send("Is it safe to commit secrets.env?"))
        question = await _answer_share(qtbot, window, "keep")
        await sending
        await window.controller.wait_idle()
        first = len(lan_server.requests)
        _reads_the_file(lan_server)
        await window.send("And what about secrets.env now?")  # same chat: not asked again
        await window.controller.wait_idle()
        asked_again = any(d.isVisible() for d in window.findChildren(ConfirmDialog))
        conversation = await window.ctx.store.get_conversation(window.conversation_id)
        return question, first, asked_again, conversation.chat_options

    question, first, asked_again, options = loop.run_until_complete(scenario())
    assert lan_server.host in question and "secrets.env" in question
    assert first >= 2 and not asked_again
    assert options.get("content_kept_from") == [lan_server.host]
    sent = json.dumps([r.json for r in lan_server.requests])
    assert PASSWORD not in sent and "nothing was sent" in sent


def test_allow_for_this_chat_sends_the_file(qtbot, loop, lan_server, tmp_path) -> None:  # noqa: F811
    llm = OpenAICompatibleLLM(base_url=lan_server.base_url, model="hosted")

    async def scenario():
        window = await make_window(qtbot, llm, settings=_settings(tmp_path),
                                   tools_factory=_few_tools)
        _reads_the_file(lan_server)
        sending = window.spawn(window.send("Is it safe to commit secrets.env?"))
        await _answer_share(qtbot, window, "allow")
        await sending
        await window.controller.wait_idle()
        turn = window.chat.items()[-1]
        await wait_for(lambda: turn.sent.isVisible())
        return turn.sent.text()

    line = loop.run_until_complete(scenario())
    assert PASSWORD in json.dumps([r.json for r in lan_server.requests])
    assert line.startswith(f"Sent to {lan_server.host} · ")


def _few_tools(settings: Settings):
    from desktop_app.core.tools.base import ToolRegistry
    from desktop_app.core.tools.builtin import default_tools

    return ToolRegistry([t for t in default_tools(settings)
                         if t.name in ("read_file", "calculator", "list_files")])


def test_going_on_with_a_hosted_model_does_not_send_earlier_answers_unasked(
        qtbot, loop, lan_server, tmp_path) -> None:  # noqa: F811
    """Found by an attack: a chat answered on a local model (quoting a file) and continued
    on a hosted one sent the quoted file along with the history."""
    from desktop_app.core.llm.testing import ScriptedLLM, tool_call_reply

    local = ScriptedLLM([tool_call_reply(("read_file", {"path": "secrets.env"})),
                         f"The file says db_password={PASSWORD}.",
                         f"The file says db_password={PASSWORD}."],
                        model_id="local-model", tool_call=True)
    hosted = OpenAICompatibleLLM(base_url=lan_server.base_url, model="hosted")

    async def scenario():
        window = await make_window(qtbot, local, hosted, settings=_settings(tmp_path),
                                   tools_factory=_few_tools)
        window.picker.select("local-model")
        await window.send("What is in secrets.env?")
        await window.controller.wait_idle()
        window.picker.select("hosted")
        window._model_changed("hosted")
        lan_server.add(Reply(sse=[chunk("Noted.", finish_reason="stop")]))
        sending = window.spawn(window.send("Thanks. Anything else?"))
        question = await _answer_share(qtbot, window, "keep")
        await sending
        await window.controller.wait_idle()
        return question

    question = loop.run_until_complete(scenario())
    assert "earlier answers" in question
    sent = json.dumps([r.json for r in lan_server.requests])
    assert lan_server.requests and PASSWORD not in sent
    assert "Anything else?" in sent
