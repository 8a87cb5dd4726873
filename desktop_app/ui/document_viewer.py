"""A cited document, opened in the app at the cited place.

The file is converted again in a worker thread (the index keeps passages, which overlap;
the reader wants the document), shown section by section with its pages or headings, the
cited section scrolled into view and the cited passage highlighted. "Open file" hands the
original to the system's viewer.
"""

from __future__ import annotations

import asyncio
import html
from pathlib import Path
from typing import Any

from PySide6.QtCore import QUrl
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QPushButton,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

_MARK = "background-color: #ffe58a; color: #000;"


def document_html(sections: list[Any], page: int | None, heading: str,
                  passage: str) -> tuple[str, str | None]:
    """HTML of the sections and the anchor of the cited one; the passage is marked."""
    parts: list[str] = []
    target: str | None = None
    needle = " ".join(passage.split())
    for index, section in enumerate(sections):
        anchor = f"s{index}"
        title = f"Page {section.page}" if section.page is not None else section.heading
        is_target = target is None and (
            (page is not None and section.page == page)
            or (page is None and heading and section.heading == heading))
        if is_target:
            target = anchor
        text = " ".join(section.text.split())
        body = html.escape(text)
        if is_target and needle:
            # The passage's opening words mark where it starts (it may run past the section).
            start = text.find(needle[:80])
            if start >= 0:
                end = start + min(len(needle), len(text) - start)
                body = (html.escape(text[:start]) + f'<span style="{_MARK}">'
                        + html.escape(text[start:end]) + "</span>" + html.escape(text[end:]))
        if title:
            parts.append(f'<h3><a name="{anchor}"></a>{html.escape(title)}</h3>')
        else:
            parts.append(f'<a name="{anchor}"></a>')
        parts.append(f"<p>{body}</p>")
    return "\n".join(parts), target


class DocumentViewer(QDialog):
    def __init__(self, path: Path, passage: Any, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.path = path
        self.passage = passage
        self.setWindowTitle(f"{path.name} — cited passage [{passage.number}]")
        self.resize(760, 640)
        layout = QVBoxLayout(self)
        where = f"page {passage.page}" if passage.page is not None else (passage.heading or "")
        self.place = QLabel(f"{path}" + (f"  ·  {where}" if where else ""))
        self.place.setObjectName("Muted")
        self.place.setWordWrap(True)
        layout.addWidget(self.place)
        self.view = QTextBrowser(self)
        self.view.setOpenLinks(False)  # the text is the user's document: nothing to follow
        self.view.setPlainText("Opening…")
        layout.addWidget(self.view, 1)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        open_file = QPushButton("Open file")
        open_file.setToolTip("Open the original in the system's viewer")
        open_file.clicked.connect(
            lambda: QDesktopServices.openUrl(QUrl.fromLocalFile(str(path))))
        buttons.addButton(open_file, QDialogButtonBox.ButtonRole.ActionRole)
        buttons.rejected.connect(self.close)
        layout.addWidget(buttons)
        self.target: str | None = None

    async def load(self) -> None:
        from desktop_app.core.documents.convert import ConversionError, convert

        try:
            sections = await asyncio.to_thread(convert, self.path)
        except ConversionError as exc:
            self.view.setPlainText(f"{self.path.name} cannot be shown: {exc}\n\n"
                                   f"The cited passage:\n\n{self.passage.text}")
            return
        body, self.target = document_html(sections, self.passage.page, self.passage.heading,
                                          self.passage.text)
        self.view.setHtml(body)
        if self.target:
            self.view.scrollToAnchor(self.target)
