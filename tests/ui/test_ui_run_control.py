"""Interrupts, stop, regenerate and edit-and-resend through the real window and engine."""

from __future__ import annotations

import asyncio
import time

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QPushButton
from ui_helpers import make_window, wait_for

from desktop_app.core.llm.testing import ScriptedLLM, json_action, json_final

pytestmark = pytest.mark.gui

LONG_ANSWER = " ".join(f"word{i}" for i in range(400))


def test_sending_while_running_is_an_interrupt_the_agent_receives(qtbot, loop) -> None:
    llm = ScriptedLLM([json_action("calculator", {"expression": "6*7"}), json_final("42"),
                       "It is 42, in euros as you asked."], model_id="scripted", delay=0.4)

    async def scenario():
        window = await make_window(qtbot, llm)
        await window.send("What is 6*7?")
        await wait_for(lambda: window.controller.active is not None
                       and window.controller.active.recorder is not None
                       and window.controller.active.assistant_message_id)
        window.composer.set_text("answer in euros please")
        window.composer.submit()  # the button reads "Interrupt" now
        await window.controller.wait_idle()
        detail = await window.ctx.store.load_conversation(window.conversation_id)
        return window, detail

    window, detail = loop.run_until_complete(scenario())
    turn = window.chat.items()[-1]
    assert [n.text for n in turn.interrupts] == ["answer in euros please"]
    assert turn.interrupts[0].delivered
    seen = [m.content for r in llm.requests for m in r.messages if m.role == "user"]
    assert any("[USER INTERRUPT]" in c and "answer in euros please" in c for c in seen)
    assert [(i.content, i.status) for i in detail.interrupts] == [
        ("answer in euros please", "delivered")]
    # Reopened, the interrupt shows inside the answer, not as a separate user bubble.
    loop.run_until_complete(window.open_conversation(window.conversation_id))
    items = window.chat.items()
    assert len(items) == 2 and [n.text for n in items[1].interrupts] == ["answer in euros please"]


def test_composer_switches_to_interrupt_and_stop_while_running(qtbot, loop) -> None:
    llm = ScriptedLLM([json_final("ok"), "fine"], model_id="scripted", delay=0.3)

    async def scenario():
        window = await make_window(qtbot, llm)
        await window.send("hi")
        states = (window.composer.send_button.text(), window.composer.stop_button.isVisible())
        await window.controller.wait_idle()
        return window, states

    window, states = loop.run_until_complete(scenario())
    assert states == ("Interrupt", True)
    assert window.composer.send_button.text() == "Send"
    assert not window.composer.stop_button.isVisible()


@pytest.mark.parametrize("how", ["button", "escape"])
def test_stop_cancels_promptly_and_keeps_the_partial_answer(qtbot, loop, how) -> None:
    llm = ScriptedLLM([json_final("long"), LONG_ANSWER], model_id="scripted",
                      chunk_size=6, delay=0.02)

    async def scenario():
        window = await make_window(qtbot, llm)
        await window.send("write a lot")
        turn = window.live_turn
        await wait_for(lambda: len(turn.answer.text()) > 200, timeout=20)
        stopped_at = time.perf_counter()
        if how == "button":
            window.composer.stop_button.click()
        else:
            qtbot.keyClick(window.composer.input, Qt.Key.Key_Escape)
        await window.controller.wait_idle()
        elapsed = time.perf_counter() - stopped_at
        detail = await window.ctx.store.load_conversation(window.conversation_id)
        return window, turn, elapsed, detail

    # The window stays referenced: the turn's widgets are its children.
    _window, turn, elapsed, detail = loop.run_until_complete(scenario())
    assert elapsed < 0.5
    partial = turn.answer_text()
    assert 200 < len(partial) < len(LONG_ANSWER)
    assert LONG_ANSWER.startswith(partial)
    assert "stopped" in turn.footer.text()
    stored = detail.messages[-1]
    assert stored.status == "interrupted" and stored.content == partial


def test_regenerate_replaces_the_answer(qtbot, loop) -> None:
    llm = ScriptedLLM([json_final("a"), "First answer.", json_final("b"), "Second answer."],
                      model_id="scripted")

    async def scenario():
        window = await make_window(qtbot, llm)
        await window.send("question")
        await window.controller.wait_idle()
        window.chat.items()[-1].regenerate_button.click()
        await wait_for(lambda: not llm.replies and window.controller.active is None)
        await asyncio.sleep(0.05)  # let deleteLater of the old widgets run
        detail = await window.ctx.store.load_conversation(window.conversation_id)
        return window, detail

    window, detail = loop.run_until_complete(scenario())
    items = window.chat.items()
    assert [type(w).__name__ for w in items] == ["UserMessage", "AssistantTurn"]
    assert items[1].answer_text() == "Second answer."
    assert [(m.role, m.content) for m in detail.messages] == [
        ("user", "question"), ("assistant", "Second answer.")]


def test_edit_and_resend_replaces_the_question(qtbot, loop) -> None:
    llm = ScriptedLLM([json_final("a"), "About cats.", json_final("b"), "About dogs."],
                      model_id="scripted")

    async def scenario():
        window = await make_window(qtbot, llm)
        await window.send("tell me about cats")
        await window.controller.wait_idle()
        window.chat.items()[0].edit_button.click()
        assert window.composer.text() == "tell me about cats"
        # The composer says what Send will do, and the edit can be called off.
        assert window.composer.editing and window.composer.send_button.text() == "Resend"
        assert window.chat.items()[0].edit_button.text() == "Editing…"
        window.composer.editing_bar.findChild(QPushButton).click()
        assert not window.composer.editing and window.composer.text() == ""
        assert window.chat.items()[0].edit_button.text() == "Edit"
        window.chat.items()[0].edit_button.click()
        window.composer.set_text("tell me about dogs")
        window.composer.submit()
        await wait_for(lambda: not llm.replies and window.controller.active is None)
        await asyncio.sleep(0.05)
        detail = await window.ctx.store.load_conversation(window.conversation_id)
        await window.sidebar.refresh()
        return window, detail

    window, detail = loop.run_until_complete(scenario())
    assert not window.composer.editing
    assert [(m.role, m.content) for m in detail.messages] == [
        ("user", "tell me about dogs"), ("assistant", "About dogs.")]
    # The chat's title followed the edited first question.
    assert detail.conversation.title == "tell me about dogs"
    assert window.sidebar.list.item(0).text().startswith("tell me about dogs")
    items = window.chat.items()
    assert [w.text for w in items if type(w).__name__ == "UserMessage"] == ["tell me about dogs"]
    # the model saw only the edited question, not the old exchange
    assert "cats" not in " ".join(m.content for m in llm.requests[-1].messages)


def test_an_interrupt_sent_during_the_final_answer_starts_the_next_turn(qtbot, loop) -> None:
    llm = ScriptedLLM([json_final("a"), "The first answer, streamed slowly. " * 6,
                       json_final("b"), "Here is the follow-up."],
                      model_id="scripted", chunk_size=4, delay=0.03)

    async def scenario():
        window = await make_window(qtbot, llm)
        await window.send("first question")
        turn = window.live_turn
        await wait_for(lambda: len(turn.answer.text()) > 20, timeout=20)
        window.composer.set_text("and also this")
        window.composer.submit()
        await wait_for(lambda: not llm.replies and window.controller.active is None, timeout=30)
        await asyncio.sleep(0.05)
        detail = await window.ctx.store.load_conversation(window.conversation_id)
        return window, detail

    window, detail = loop.run_until_complete(scenario())
    turns = [w for w in window.chat.items() if type(w).__name__ == "AssistantTurn"]
    assert turns[-1].answer_text() == "Here is the follow-up."
    assert [(i.content, i.status) for i in detail.interrupts] == [("and also this", "delivered")]
    assert "and also this" in llm.requests[2].last_user_text
    answers = [m.content for m in detail.messages if m.role == "assistant"]
    assert answers[-1] == "Here is the follow-up." and len(answers) == 2


def test_an_edit_is_dropped_when_the_user_leaves_the_chat(qtbot, loop) -> None:
    llm = ScriptedLLM([json_final("a"), "About cats.", json_final("b"), "About dogs."],
                      model_id="scripted")

    async def scenario():
        window = await make_window(qtbot, llm)
        await window.send("tell me about cats")
        await window.controller.wait_idle()
        first = window.conversation_id
        window.chat.items()[0].edit_button.click()
        assert window.composer.editing
        window.new_conversation()
        await window.send("tell me about dogs")
        await window.controller.wait_idle()
        kept = await window.ctx.store.load_conversation(first)
        return window, kept

    window, kept = loop.run_until_complete(scenario())
    # Sending in the new chat did not "replace" the old chat's question.
    assert [m.content for m in kept.messages] == ["tell me about cats", "About cats."]
    assert not window.composer.editing and window.composer.send_button.text() == "Send"
