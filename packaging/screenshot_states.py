"""The shots of packaging/screenshot.py for states fixed in the window-state work (issue
27): the keyboard shortcuts (F1), an answer cut at the length limit with its footer saying
so, the DAG answer reopened with its plan card and check line, and the Models window with
a model in memory."""

from __future__ import annotations

from typing import Any


async def state_shots(window: Any, scripted: Any, grab: Any, settle: Any) -> None:
    from desktop_app.core.llm.types import ChatMessage, LLMResult, Usage
    from desktop_app.ui.shortcuts import show_shortcuts

    dialog = show_shortcuts(window)
    await settle()
    grab(dialog, "14-shortcuts.png")
    dialog.close()

    # The DAG run of the earlier shot, reopened as after a restart.
    chats = await window.ctx.store.list_conversations()
    dag_chat = next((c.id for c in chats if c.title.startswith("Convert 10 miles")), None)
    window.new_conversation()
    await settle()
    if dag_chat is not None:
        await window.open_conversation(dag_chat)
        await settle(0.6)
        grab(window, "15-dag-reopened.png")

    window.new_conversation()
    window.picker.set_registry(window.ctx.registry, "qwen2.5-coder-0.5b")
    window.picker.mode.setCurrentIndex(window.picker.mode.findData("react"))
    bar = window.assistant.picker
    bar.combo.setCurrentIndex(max(0, bar.combo.findData("General")))
    story = ("Once upon a time a small fox lived at the edge of a forest. Every morning she "
             "walked to the river, counted the stones on the bank and walked back in a "
             "circle. Tim")
    scripted._next_reply = lambda _request: LLMResult(  # the model's output limit ends it
        message=ChatMessage.assistant(story), finish_reason="length", usage=Usage.of(38, 64))
    await window.send("Write a 400-word story about a fox.")
    await window.controller.wait_idle()
    await settle(0.6)
    grab(window, "16-answer-cut-at-the-limit.png")

    window.open_models()
    await settle(1.0)
    models = window.models_window
    models.tabs.setCurrentIndex(0)
    await models.refresh()
    if models.installed.rowCount():
        models.installed.selectRow(0)
    await settle()
    grab(models, "17-models-in-memory.png")
    models.close()
