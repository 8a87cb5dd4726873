"""Documents in the window: a collection made and indexed in the Documents window (with a
file that fails, shown beside its name), attached to a chat from the composer, searched for
the question, cited answers with [n] links, a citation opening the document at its page,
and the links still there when the chat is reopened. Real widgets, store, index and
embedding model; a scripted chat model."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from PySide6.QtCore import QUrl
from ui_helpers import make_window, wait_for

from desktop_app.core.llm.testing import ScriptedLLM, tool_call_reply
from desktop_app.ui.markdown_view import AutoHeightBrowser

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "documents"))
from doc_files import write_pdf

pytestmark = pytest.mark.gui


def _folder(tmp_path: Path) -> Path:
    root = tmp_path / "manuals"
    root.mkdir()
    write_pdf(root / "washer.pdf", ["Model WX-200 user guide.",
                                    "Warranty: the washing machine is covered for 24 months."])
    (root / "wifi.md").write_text("# Network\n\nThe guest wifi password is sunflower42.\n")
    (root / "notes.txt").write_bytes(b"\x00\x01binary")
    return root


def _cite_html(turn) -> str:
    return "".join(b.toHtml() for b in turn.answer.findChildren(AutoHeightBrowser))


def test_index_attach_ask_cite_open_reopen(loop, qtbot, tmp_path) -> None:
    async def scenario() -> None:
        answer = "The washer is covered for 24 months [1]."
        search = tool_call_reply(("search_documents", {"query": "washer warranty"}))
        llm = ScriptedLLM([search, answer, answer], tool_call=True)
        window = await make_window(qtbot, llm)
        window.documents.open_window()
        documents = window.documents.documents_window
        documents.add_paths("Manuals", [_folder(tmp_path)])
        await wait_for(lambda: documents._task is None, timeout=60)
        assert documents.progress_label.text().startswith(
            "Manuals is up to date: 2 files indexed (3 passages), 1 could not be read.")
        rows = {documents.files.item(r, 0).text():
                documents.files.item(r, 2).text() for r in range(documents.files.rowCount())}
        assert rows["notes.txt"].startswith("✗ This is a binary file")
        assert rows["washer.pdf"] == "✓ indexed"

        # Attach from the composer's Documents menu.
        window.documents._fill_menu()
        action = next(a for a in window.documents.menu.actions()
                      if a.text().startswith("Manuals"))
        action.setChecked(True)
        assert window.documents.button.text() == "Documents: Manuals"
        await window.send("How long is the washer's warranty?")
        await wait_for(lambda: window.controller.active is None, timeout=60)
        tool_messages = [m for m in llm.requests[1].messages if m.role == "tool"]
        assert tool_messages[0].content.startswith("[1] Manuals/washer.pdf, page 2\n")
        from desktop_app.ui.message_widgets import AssistantTurn

        turn = [t for t in window.chat.findChildren(AssistantTurn) if t.cards][-1]
        assert [c.tool_name for c in turn.cards] == ["search_documents"]
        card = turn.cards[0]
        assert card.result_label.text().startswith("Passages given to the model")
        assert card.observation == tool_messages[0].content  # exactly what the model got
        assert 'href="cite:1"' in _cite_html(turn)
        stored = await window.ctx.store.get_conversation(window.conversation_id)
        assert stored.chat_options == {"documents": ["Manuals"]}

        # Hovering a citation previews its passage.
        from PySide6.QtWidgets import QToolTip

        turn.answer._citation_hover(QUrl("cite:1"))
        assert QToolTip.text().startswith("Manuals/washer.pdf, page 2\n\nWarranty: the washing")
        turn.answer._citation_hover(QUrl())
        # A citation opens the document at the cited page, the passage marked.
        browser = turn.answer.findChildren(AutoHeightBrowser)[0]
        browser.anchorClicked.emit(QUrl("cite:1"))
        viewer = window.documents.viewers[-1]
        await wait_for(lambda: viewer.target is not None, timeout=30)
        assert viewer.path.name == "washer.pdf" and viewer.target == "s1"  # page 2
        assert "ffe58a" in viewer.view.toHtml()  # the highlight
        assert "covered for 24 months" in viewer.view.toPlainText()

        # Reopened later: the links come back from the stored tool step.
        conversation_id = window.conversation_id
        window.new_conversation()
        await window.open_conversation(conversation_id)
        await wait_for(lambda: any(
            w.cards and w.isVisible() for w in window.chat.findChildren(AssistantTurn)))
        reopened = [w for w in window.chat.findChildren(AssistantTurn) if w.cards and w.isVisible()]
        assert reopened and 'href="cite:1"' in _cite_html(reopened[-1])
        assert window.documents.button.text() == "Documents: Manuals"

    loop.run_until_complete(scenario())


def test_a_citation_whose_file_is_gone_says_so(loop, qtbot, tmp_path) -> None:
    async def scenario() -> None:
        from desktop_app.core.documents.citations import parse_passages

        window = await make_window(qtbot, ScriptedLLM(["x"]))
        passage = parse_passages(["[1] Old/report.pdf, page 3\nThe text."])[1]
        window.documents.open_citation(passage)
        assert window.documents.viewers == []
        from PySide6.QtWidgets import QLabel

        from desktop_app.ui.text_wrap import WrappingText

        texts = [*window.chat.findChildren(QLabel), *window.chat.findChildren(WrappingText)]
        shown = " ".join(widget.text() for widget in texts)
        assert "is no longer there" in shown and "The text." in shown

    loop.run_until_complete(scenario())
