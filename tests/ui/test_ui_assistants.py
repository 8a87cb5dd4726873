"""Assistants in the window: picking one changes what the model is told, which tools it
gets and its temperature; the choice and a chat's own settings are stored with the chat;
people make their own in the editor. Real widgets, real store, a scripted model."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from ui_helpers import make_window, wait_for

from desktop_app.core.assistants import ChatOptions
from desktop_app.core.config.settings import load_settings
from desktop_app.core.llm.testing import ScriptedLLM

pytestmark = pytest.mark.gui


async def _send_and_wait(window, text: str) -> None:
    await window.send(text)
    await wait_for(lambda: window.controller.active is None)


def test_an_assistant_sets_prompt_tools_and_temperature_and_is_stored(loop, qtbot) -> None:
    async def scenario() -> None:
        llm = ScriptedLLM(["Buenos días.", "Hola.", "x"], tool_call=True)
        window = await make_window(qtbot, llm)
        bar = window.assistant.picker
        assert bar.current() == "General"
        bar.combo.setCurrentIndex(bar.combo.findData("Translator"))
        await _send_and_wait(window, "Translate 'good morning' into Spanish.")
        request = llm.requests[0]
        assert request.messages[0].content.startswith("Translate the user's text")
        assert not request.tools  # the Translator uses no tools
        assert request.temperature == 0.2
        conversation_id = window.conversation_id
        # This chat's own temperature overrides the assistant's.
        window.assistant._options_chosen(ChatOptions(temperature=1.1))
        await wait_for(lambda: True)
        await _send_and_wait(window, "And 'good night'?")
        assert llm.requests[-1].temperature == 1.1
        # Stored: a new chat keeps the choice, reopening the first shows it again.
        window.new_conversation()
        bar.combo.setCurrentIndex(bar.combo.findData("General"))
        await window.open_conversation(conversation_id)
        assert bar.current() == "Translator"
        stored = await window.ctx.store.get_conversation(conversation_id)
        assert stored.assistant == "Translator" and stored.chat_options == {"temperature": 1.1}

    loop.run_until_complete(scenario())


def test_the_general_assistant_keeps_every_tool(loop, qtbot) -> None:
    async def scenario() -> None:
        llm = ScriptedLLM(["42"], tool_call=True)
        window = await make_window(qtbot, llm)
        await _send_and_wait(window, "What is 6*7?")
        offered = {spec["function"]["name"] for spec in llm.requests[0].tools or []}
        assert "calculator" in offered and len(offered) >= 5
        assert llm.requests[0].temperature is None

    loop.run_until_complete(scenario())


def test_people_make_their_own_assistant(loop, qtbot) -> None:
    async def scenario() -> None:
        llm = ScriptedLLM(["Done."], tool_call=True)
        window = await make_window(qtbot, llm)
        window.assistant.manage()
        window.ctx.persist_settings = True
        editor = window.assistant.editor
        qtbot.mouseClick(editor.new_button, Qt.MouseButton.LeftButton)
        editor.name.setText("Pirate")
        editor.prompt.setPlainText("Answer like a pirate.")
        editor.all_tools.setChecked(False)
        for i in range(editor.tools.count()):
            item = editor.tools.item(i)
            if item.text() == "calculator":
                item.setCheckState(Qt.CheckState.Checked)
        editor.save()
        # Saved off the Qt thread: in the window's settings at once, on disk soon after.
        assert [a.name for a in window.ctx.settings.assistants] == ["Pirate"]
        await wait_for(lambda: bool(load_settings().assistants))
        [own] = load_settings().assistants
        assert own.name == "Pirate" and own.tools == ["calculator"]
        await wait_for(lambda: window.assistant.picker.combo.findData("Pirate") >= 0)
        # Saving rebuilt the model list from settings: put the scripted model back.
        window.ctx.registry.register(llm.model_id, llm, default=True)
        window.picker.set_registry(window.ctx.registry, llm.model_id)
        bar = window.assistant.picker
        bar.combo.setCurrentIndex(bar.combo.findData("Pirate"))
        await _send_and_wait(window, "Hello")
        request = llm.requests[0]
        assert request.messages[0].content.startswith("Answer like a pirate.")
        assert [spec["function"]["name"] for spec in request.tools] == ["calculator"]
        # A built-in cannot be edited in place, and a duplicate is the user's own.
        editor2 = window.assistant.manage() or window.assistant.editor
        editor2.list.setCurrentRow(1)  # Writer (built in)
        assert not editor2.form_box.isEnabled() and not editor2.delete_button.isEnabled()

    loop.run_until_complete(scenario())
