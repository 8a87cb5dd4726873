"""A new chat starts without the last chat's own options: an attached document collection
used to follow into every new chat ("Documents: Home") and take over unrelated questions."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from ui_helpers import make_window

from desktop_app.core.llm.testing import ScriptedLLM

pytestmark = pytest.mark.gui


@pytest.mark.anyio
async def test_attached_documents_and_chat_options_stay_with_their_chat(
        qtbot: Any, app_home: Path) -> None:
    window = await make_window(qtbot, ScriptedLLM([]))
    window.documents.set_attached("Home", True)
    window.assistant.options = window.assistant.options.model_copy(update={"temperature": 1.2})
    assert window.documents.button.text() == "Documents: Home"
    window.new_conversation()
    assert window.documents.attached == []
    assert window.documents.button.text() == "Documents"
    assert window.assistant.options.temperature is None


@pytest.mark.anyio
async def test_attaching_documents_prepares_the_chat_s_first_question(
        qtbot: Any, app_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The first question of a chat with documents waited for its own system turn (the
    search tool added) to be evaluated: attaching prepares it in the background, on the
    model the window loaded."""
    import asyncio

    from desktop_app.core.agent import factory

    prepared: list[tuple[Any, list[str], list[str]]] = []

    async def record(llm: Any, tools: Any, library: Any, collections: Any,
                     system_prompt: str | None = None) -> None:
        prepared.append((llm, [tool.name for tool in tools], list(collections)))

    monkeypatch.setattr(factory, "warm_up_documents", record)
    llm = ScriptedLLM([])
    window = await make_window(qtbot, llm)
    window.documents.set_attached("Work", True)
    await asyncio.sleep(0.3)
    assert prepared == []  # no model loaded: attaching does not load one
    window.documents.set_attached("Work", False)

    await window.controller.ensure_llm(llm.model_id)
    window.documents.set_attached("Home", True)
    for _ in range(100):
        if prepared:
            break
        await asyncio.sleep(0.05)
    model, tools, collections = prepared[0]
    assert model is llm and collections == ["Home"]
    assert "calculator" in tools  # the chat's own tools, to which the search is added

    window.documents.set_attached("Home", False)
    await asyncio.sleep(0.3)
    assert len(prepared) == 1  # nothing attached: nothing to prepare


@pytest.mark.anyio
async def test_a_head_start_that_fails_shows_nothing(
        qtbot: Any, app_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Preparing documents ahead is a head start only: a model that no longer exists, or a
    failing preparation, shows no error (the question itself reports what is wrong)."""
    import asyncio

    from desktop_app.core.agent import factory
    from desktop_app.ui.message_widgets import ErrorCard

    async def fail(*args: Any, **kwargs: Any) -> None:
        raise OSError("disk unreadable")

    monkeypatch.setattr(factory, "warm_up_documents", fail)
    llm = ScriptedLLM([])
    window = await make_window(qtbot, llm)
    await window.controller.ensure_llm(llm.model_id)
    window.documents.set_attached("Home", True)
    monkeypatch.setattr(window.picker, "current_model", lambda: "a-model-since-removed")
    window.documents.set_attached("Work", True)
    await asyncio.sleep(0.3)
    assert window.chat.findChildren(ErrorCard) == []
    assert window.controller._documents_prepared.done()
