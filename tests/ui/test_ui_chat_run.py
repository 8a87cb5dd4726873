"""A full run through the real window, engine and store with the scripted fake model."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from ui_helpers import make_window, wait_for

from desktop_app.core.llm.testing import ScriptedLLM, json_action, json_final
from desktop_app.ui.markdown_view import CodeBlockWidget

pytestmark = pytest.mark.gui

ANSWER = "The result is **5**.\n\n```python\nprint(2 + 3)\n```\n\nDone."


def scripted(**kwargs) -> ScriptedLLM:
    return ScriptedLLM([json_action("calculator", {"expression": "2+3"}, "need math"),
                        json_final("5"), ANSWER], model_id="scripted", **kwargs)


def test_full_run_renders_card_streamed_answer_and_footer(qtbot, loop) -> None:
    llm = scripted()

    async def scenario():
        window = await make_window(qtbot, llm)
        window.composer.set_text("What is 2+3?")
        window.composer.submit()
        await wait_for(lambda: not llm.replies and window.controller.active is None)
        return window

    window = loop.run_until_complete(scenario())
    turn = window.chat.items()[-1]
    assert [c.tool_name for c in turn.cards] == ["calculator"]
    card = turn.cards[0]
    assert card.status == "done" and card.observation.strip().endswith("5")
    assert '"expression": "2+3"' in card.args_text
    assert not card.expanded  # collapsed once done
    assert turn.answer_text() == ANSWER
    blocks = turn.answer.code_blocks()
    assert [b.code for b in blocks] == ["print(2 + 3)"] and blocks[0].language == "python"
    footer = turn.footer.text().replace("\u00a0", " ").replace("\u2060", "")
    assert "scripted" in footer and "2 iterations" in footer and "tokens" in footer
    assert "tok/s" in footer and turn.footer.isVisible()
    assert not turn.thinking.isVisible()
    assert window.composer.send_button.text() == "Send"


def test_run_is_persisted_and_reopens_identically(qtbot, loop) -> None:
    llm = scripted()

    async def scenario():
        window = await make_window(qtbot, llm)
        await window.send("What is 2+3?")
        await window.controller.wait_idle()
        conv_id = window.conversation_id
        detail = await window.ctx.store.load_conversation(conv_id)
        window.new_conversation()
        await window.open_conversation(conv_id)
        return window, detail

    window, detail = loop.run_until_complete(scenario())
    roles = [m.role for m in detail.messages]
    assert roles == ["user", "assistant"]
    assistant = detail.messages[1]
    assert assistant.content == ANSWER and assistant.status == "complete"
    assert [s.tool for s in assistant.steps] == ["calculator"]
    assert assistant.completion_tokens and assistant.timings.elapsed is not None
    assert detail.conversation.title == "What is 2+3?"
    user, turn = window.chat.items()
    assert user.text == "What is 2+3?"
    assert turn.answer_text() == ANSWER and turn.cards[0].tool_name == "calculator"
    assert "scripted" in turn.footer.text()


def test_copy_button_puts_code_on_clipboard(qtbot, loop) -> None:
    from PySide6.QtGui import QGuiApplication

    async def scenario():
        window = await make_window(qtbot, scripted())
        await window.send("What is 2+3?")
        await window.controller.wait_idle()
        return window

    window = loop.run_until_complete(scenario())
    block = window.chat.items()[-1].answer.code_blocks()[0]
    assert isinstance(block, CodeBlockWidget)
    block.copy_button.click()
    assert QGuiApplication.clipboard().text() == "print(2 + 3)"


def test_llm_error_is_shown_in_the_turn_with_what_to_do(qtbot, loop) -> None:
    from desktop_app.core.errors import LLMConnectionError

    llm = ScriptedLLM([LLMConnectionError("The model server at http://x could not be reached.",
                                          hint="Start the server or check the base URL.")],
                      model_id="scripted")

    async def scenario():
        window = await make_window(qtbot, llm)
        await window.send("hello")
        await window.controller.wait_idle()
        return window

    window = loop.run_until_complete(scenario())
    turn = window.chat.items()[-1]
    assert turn.errors and "could not be reached" in turn.errors[0].message
    assert "check the base URL" in turn.errors[0].message
    assert turn.footer.isVisible()
    assert window.composer.send_button.text() == "Send"


def test_new_chat_keeps_the_chosen_model_and_unhighlights_the_old_chat(qtbot, loop) -> None:
    first, second = scripted(), ScriptedLLM(default="Hi.", model_id="other")

    async def scenario():
        window = await make_window(qtbot, first, second)
        window.picker.select("other")
        await window.send("hello")
        await window.controller.wait_idle()
        await window.sidebar.refresh()
        assert window.sidebar.list.currentItem() is not None  # the open chat is highlighted
        qtbot.keyClick(window, Qt.Key.Key_N, Qt.KeyboardModifier.ControlModifier)
        return window

    window = loop.run_until_complete(scenario())
    assert window.conversation_id is None
    assert window.picker.current_model() == "other"  # not reset to the default
    assert window.sidebar.list.currentItem() is None
    assert not window.sidebar.list.selectedItems()


def test_ctrl_q_closes_the_window(qtbot, loop) -> None:
    window = loop.run_until_complete(make_window(qtbot, scripted()))
    qtbot.keyClick(window, Qt.Key.Key_Q, Qt.KeyboardModifier.ControlModifier)
    assert not window.isVisible()


def test_the_context_gauge_counts_the_conversation_and_warns_before_sending(qtbot, loop) -> None:
    small = ScriptedLLM(default="Sure.", model_id="small", context_size=8192)

    async def scenario():
        window = await make_window(qtbot, small)
        await window.refresh_gauge()
        empty_base = window.composer.gauge.base
        await window.send("Tell me about " + "rivers " * 150)
        await window.controller.wait_idle()
        await wait_for(lambda: (window.composer.gauge.base or 0) > (empty_base or 0))
        return window, empty_base

    window, empty_base = loop.run_until_complete(scenario())
    gauge = window.composer.gauge
    assert gauge.isVisible() and gauge.text().startswith("Context ")
    assert gauge.text().endswith("/ 8.2k") and gauge.level == "ok", gauge.text()
    assert gauge.base > empty_base + 150  # the stored question now counts
    window.composer.set_text("more " * 6000)  # a long draft nearly fills 8,192 tokens
    assert gauge.level == "full" and "nearly full" in gauge.text()
    assert "oldest messages will be summarised" in gauge.toolTip()
    window.composer.set_text("")
    assert gauge.level != "full"
