"""The sidebar over the real store: order, FTS search, rename, archive, delete with undo."""

from __future__ import annotations

import asyncio

import pytest
from PySide6.QtWidgets import QLineEdit
from ui_helpers import make_window, wait_for

from desktop_app.core.llm.testing import ScriptedLLM
from desktop_app.core.store.async_store import AsyncStore
from desktop_app.ui.sidebar import Sidebar

pytestmark = pytest.mark.gui


async def _seed(window, titles_and_texts):
    store = window.ctx.store
    ids = []
    for title, text in titles_and_texts:
        conv = await store.create_conversation(title)
        await store.add_message(conv.id, "user", text)
        await store.add_message(conv.id, "assistant", f"answer about {text}")
        ids.append(conv.id)
        await asyncio.sleep(0.01)  # distinct updated_at
    await window.sidebar.refresh()
    return ids


def test_conversations_are_listed_newest_first(qtbot, loop) -> None:
    async def scenario():
        window = await make_window(qtbot, ScriptedLLM(model_id="m"))
        ids = await _seed(window, [("old", "a"), ("middle", "b"), ("new", "c")])
        return window, ids

    window, ids = loop.run_until_complete(scenario())
    assert window.sidebar.ids() == list(reversed(ids))
    assert not window.sidebar.empty.isVisible()


def test_search_box_uses_full_text_search_and_opens_the_hit(qtbot, loop) -> None:
    async def scenario():
        window = await make_window(qtbot, ScriptedLLM(model_id="m"))
        ids = await _seed(window, [("trip", "packing list for norway"),
                                   ("code", "python decorators explained"),
                                   ("food", "a recipe for pancakes")])
        window.sidebar.search.setText("decorators")
        await wait_for(lambda: window.sidebar.ids() == [ids[1]])
        item = window.sidebar.list.item(0)
        text = item.text()
        window.sidebar.list.itemClicked.emit(item)
        await wait_for(lambda: window.conversation_id == ids[1])
        await wait_for(lambda: len(window.chat.items()) == 2)
        window.sidebar.search.setText("zeppelin")
        await wait_for(lambda: window.sidebar.ids() == [])
        return window, text

    window, text = loop.run_until_complete(scenario())
    assert "«decorators»" in text and text.startswith("code")
    assert window.chat.items()[0].text == "python decorators explained"
    assert window.sidebar.empty.isVisible() and "zeppelin" in window.sidebar.empty.text()


def test_rename_archive_and_delete_with_undo(qtbot, loop) -> None:
    async def scenario():
        window = await make_window(qtbot, ScriptedLLM(model_id="m"))
        a, b = await _seed(window, [("first", "x"), ("second", "y")])
        sidebar = window.sidebar
        await sidebar.rename(a, "Renamed")
        titles = [c.title for c in sidebar.conversations]
        await sidebar.archive(b)
        after_archive = sidebar.ids()
        sidebar.show_archived.setChecked(True)
        await wait_for(lambda: sidebar.ids() == [b])
        sidebar.show_archived.setChecked(False)
        await wait_for(lambda: sidebar.ids() == [a])
        await sidebar.delete(a)
        after_delete = (sidebar.ids(), sidebar.undo_bar.isVisible())
        sidebar.undo_button.click()
        await wait_for(lambda: sidebar.ids() == [a])
        return titles, after_archive, after_delete, sidebar.undo_bar.isVisible()

    titles, after_archive, after_delete, undo_visible = loop.run_until_complete(scenario())
    assert "Renamed" in titles
    assert len(after_archive) == 1
    assert after_delete == ([], True)
    assert not undo_visible


def test_last_conversation_is_reopened_on_next_launch(qtbot, loop) -> None:
    async def scenario():
        first = await make_window(qtbot, ScriptedLLM(["hello there"], model_id="m"))
        ids = await _seed(first, [("keep me", "remember this")])
        await first.open_conversation(ids[0])
        first.close()
        await first.ctx.store.aclose()
        second = await make_window(qtbot, ScriptedLLM(model_id="m"))
        return second, ids[0]

    second, conv_id = loop.run_until_complete(scenario())
    assert second.conversation_id == conv_id
    assert second.chat.items()[0].text == "remember this"


def test_a_long_conversation_builds_only_its_recent_messages(qtbot, loop) -> None:
    async def scenario():
        window = await make_window(qtbot, ScriptedLLM(model_id="m"))
        store = window.ctx.store
        conv = await store.create_conversation("long")
        for i in range(100):
            await store.add_message(conv.id, "user", f"question {i}")
            await store.add_message(conv.id, "assistant", f"answer {i}")
        await window.open_conversation(conv.id)
        first = len(window.chat.items())
        window.chat.more_button.click()
        second = len(window.chat.items())
        return window, first, second

    window, first, second = loop.run_until_complete(scenario())
    assert first == 60 and second == 120
    assert window.chat.items()[-1].answer_text() == "answer 99"
    assert window.chat.items()[0].text == "question 40"
    assert window.chat.more_button.isVisible()


def test_export_writes_markdown_and_json(qtbot, loop, tmp_path) -> None:
    import json as _json

    async def scenario():
        window = await make_window(qtbot, ScriptedLLM(model_id="m"))
        (conv_id,) = await _seed(window, [("export me", "what is a monad")])
        await window.sidebar.export(conv_id, tmp_path / "c.md", "md")
        await window.sidebar.export(conv_id, tmp_path / "c.json", "json")
        return window

    window = loop.run_until_complete(scenario())
    markdown = (tmp_path / "c.md").read_text(encoding="utf-8")
    assert "export me" in markdown and "what is a monad" in markdown
    data = _json.loads((tmp_path / "c.json").read_text(encoding="utf-8"))
    assert "what is a monad" in _json.dumps(data)
    assert "Exported to" in window.sidebar.status.text()


def test_mcp_server_tools_join_the_run_tools(qtbot, loop) -> None:
    import sys
    from pathlib import Path

    from desktop_app.core.config.settings import McpServerConfig, Settings
    from desktop_app.ui.app import start_tools

    server = Path(__file__).resolve().parents[1] / "tools" / "mcp_servers" / "notes_server.py"
    settings = Settings(mcp_servers=[
        McpServerConfig(name="notes", command=[sys.executable, str(server)]),
        McpServerConfig(name="broken", command=["/nonexistent/server"])])

    async def scenario():
        window = await make_window(qtbot, ScriptedLLM(model_id="m"), settings=settings)
        await start_tools(window)
        names = window.ctx.tools().names()
        banner = window.banner.label.text()
        await window.ctx.toolbox.aclose()
        window.ctx.toolbox = None
        return names, banner

    names, banner = loop.run_until_complete(scenario())
    assert "calculator" in names
    assert any("notes" in n for n in names), names
    assert "broken" in banner and "Settings → MCP servers" in banner


def test_the_rename_box_and_the_undo_bar_fit_a_long_title(qtbot, loop) -> None:
    title = "A very long conversation title about planning the family trip to Lisbon in May"

    async def scenario():
        store = await AsyncStore.open()
        conv = await store.create_conversation(title=title)
        sidebar = Sidebar(store)
        qtbot.addWidget(sidebar)
        sidebar.resize(240, 600)
        sidebar.show()
        await sidebar.refresh()
        sidebar._rename_dialog(conv.id)
        box = sidebar.rename_box
        edit = box.findChild(QLineEdit)
        fits = edit.width() >= edit.fontMetrics().horizontalAdvance(title)
        box.reject()
        await sidebar.delete(conv.id)
        return sidebar, fits

    sidebar, fits = loop.run_until_complete(scenario())
    assert fits  # the whole title is visible while renaming
    label = sidebar.undo_label
    assert label.wordWrap() and label.text().endswith("…”") and label.toolTip() == title
