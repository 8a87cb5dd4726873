"""Where the artifact pane opens: beside the chat, inside the window's width.

The window never grows to make room (it did, 900 → 1181 px, past the edge of a small
screen): the chat gives up room first, then the sidebar narrows, then it steps aside until
the pane closes again.
"""

from __future__ import annotations

from PySide6.QtWidgets import QSplitter, QWidget

from desktop_app.ui.artifact_pane import ArtifactPane

#: The pane's width when there is room for it.
PANE_WIDTH = 420


class ArtifactDock:
    """Opens and closes ``pane`` in ``splitter`` (sidebar, chat, pane)."""

    def __init__(self, splitter: QSplitter, sidebar: QWidget, pane: ArtifactPane) -> None:
        self.splitter, self.sidebar, self.pane = splitter, sidebar, pane
        #: The sidebar stepped aside for the pane; it comes back when the pane closes.
        self.sidebar_hidden = False
        pane.closed.connect(self.closed)

    def open(self) -> None:
        if self.pane.isVisible():
            return
        side, chat, _ = self.splitter.sizes()
        room = side + chat
        chat_min = self.splitter.widget(1).minimumSizeHint().width()
        pane_min = self.pane.minimumSizeHint().width()
        side_min = max(self.sidebar.minimumWidth(), self.sidebar.minimumSizeHint().width())
        if side and room - side - pane_min < chat_min:
            side = max(side_min, room - chat_min - pane_min)  # narrower first
            if room - side - pane_min < chat_min:
                self.sidebar.hide()
                self.sidebar_hidden = True
                side = 0
        pane = max(pane_min, min(PANE_WIDTH, room - side - chat_min))
        self.pane.show()
        self.splitter.setSizes([side, max(chat_min, room - side - pane), pane])

    def close(self) -> None:
        self.pane.hide()
        self.closed()

    def closed(self) -> None:
        """The pane was closed (by its own button or here): give the sidebar back."""
        if self.sidebar_hidden:
            self.sidebar_hidden = False
            self.sidebar.show()

    def toggle(self) -> None:
        if self.pane.isVisible():
            self.close()
        else:
            self.open()
