"""Text from outside (the model's, a tool's, an error's) that wraps inside the chat.

A ``QLabel`` with word wrap breaks lines only between words: one long run without spaces
(a URL, a path, a number the model wrote) sets its minimum width, and the chat column
grows past the window's right edge, where it is cut off (the chat has no horizontal scroll
bar). ``WrappingText`` breaks such a run where it must, like the answer's own view, and
keeps the text exactly as it is, so what a person copies is what was written.
"""

from __future__ import annotations

from PySide6.QtWidgets import QWidget

from desktop_app.ui.markdown_view import AutoHeightBrowser


class WrappingText(AutoHeightBrowser):
    """A plain-text, label-like view that is as tall as its text and never wider than the
    room it is given; ``text()``/``setText()`` as on a ``QLabel``."""

    def __init__(self, text: str = "", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setText(text)

    def text(self) -> str:
        return self.toPlainText()

    def setText(self, text: str) -> None:  # the name of the QLabel method it stands in for
        self.setPlainText(text)
