"""Edit and regenerate keep the earlier version: "‹ 2/2 ›" beside the question, and
switching shows the other version with its answer. Real widgets and store."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from ui_helpers import make_window, wait_for

from desktop_app.core.llm.testing import ScriptedLLM
from desktop_app.ui.message_widgets import AssistantTurn, UserMessage

pytestmark = pytest.mark.gui


def _shown(window) -> list[str]:
    out = []
    for widget in window.chat.items():
        if isinstance(widget, UserMessage):
            out.append(f"Q:{widget.text}")
        elif isinstance(widget, AssistantTurn):
            out.append(f"A:{widget.answer_text().strip()}")
    return out


def test_edit_and_regenerate_keep_versions_to_switch_between(loop, qtbot) -> None:
    async def scenario() -> None:
        llm = ScriptedLLM(["Paris.", "Lyon is second.", "Marseille is second."],
                         tool_call=True)
        window = await make_window(qtbot, llm)
        await window.send("Capital of France?")
        await wait_for(lambda: window.controller.active is None)
        # Edit the question and send it again.
        [question] = [w for w in window.chat.items() if isinstance(w, UserMessage)]
        window._edit(question)
        await window.send("Second city of France?")
        await wait_for(lambda: window.controller.active is None)
        await wait_for(lambda: _question(window).versions.isVisible())
        await wait_for(lambda: _shown(window)[-1] != "A:")
        assert _shown(window) == ["Q:Second city of France?", "A:Lyon is second."]
        assert _question(window).version_label.text() == "2/2"
        # Regenerate: a third version of the same question.
        turn = next(w for w in window.chat.items() if isinstance(w, AssistantTurn))
        await window.regenerate(turn)
        await wait_for(lambda: window.controller.active is None)
        await wait_for(lambda: _question(window).version_label.text() == "3/3")
        await wait_for(lambda: _shown(window)[-1] != "A:")
        assert _shown(window) == ["Q:Second city of France?", "A:Marseille is second."]
        # Back to the first version, with its own answer; the others stay.
        qtbot.mouseClick(_question(window).previous_button, Qt.MouseButton.LeftButton)
        await wait_for(lambda: _question(window).version_label.text() == "2/3")
        qtbot.mouseClick(_question(window).previous_button, Qt.MouseButton.LeftButton)
        await wait_for(lambda: _question(window).version_label.text() == "1/3")
        assert _shown(window) == ["Q:Capital of France?", "A:Paris."]
        assert not _question(window).previous_button.isEnabled()
        # The engine's history is the version shown.
        history = await window.ctx.store.load_history(window.conversation_id)
        assert [m.content for m in history] == ["Capital of France?", "Paris."]

    loop.run_until_complete(scenario())


def _question(window) -> UserMessage:
    return next(w for w in window.chat.items() if isinstance(w, UserMessage))
