"""Documents in the main window: the composer's Documents button (attach collections to
the chat), the Documents window, citations opened at their place, and the folder watch.

Attached collections are part of the chat's own options (``ChatOptions.documents``, stored
with the conversation like its assistant), so a reopened chat searches the same ones.
"""

from __future__ import annotations

import asyncio
from typing import Any

import shiboken6
from PySide6.QtWidgets import QMenu, QToolButton

#: Seconds between two looks at the collections' folders while the app runs.
WATCH_INTERVAL = 30.0


class ChatDocuments:
    def __init__(self, window: Any) -> None:
        self.window = window
        self.button = QToolButton()
        self.button.setObjectName("DocumentsButton")
        self.button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.menu = QMenu(self.button)
        self.menu.aboutToShow.connect(self._fill_menu)
        self.button.setMenu(self.menu)
        self.viewers: list[Any] = []
        self.documents_window: Any = None
        self._watch: asyncio.Task[Any] | None = None
        self.update_label()

    @property
    def attached(self) -> list[str]:
        return list(self.window.assistant.options.documents)

    def update_label(self) -> None:
        names = self.attached
        if not names:
            self.button.setText("Documents")
            self.button.setToolTip("Attach document collections to this chat: the assistant "
                                   "searches them for each question and cites them")
            return
        shown = ", ".join(names)
        self.button.setText(f"Documents: {shown if len(shown) <= 28 else shown[:27] + '…'}")
        self.button.setToolTip(f"Searched for each question: {', '.join(names)}")

    def _fill_menu(self) -> None:
        self.menu.clear()
        attached = {name.casefold() for name in self.attached}
        collections = self.window.ctx.documents().collections()
        for info in collections:
            action = self.menu.addAction(f"{info.name}  ({info.indexed} files)")
            action.setCheckable(True)
            action.setChecked(info.name.casefold() in attached)
            action.toggled.connect(lambda on, name=info.name: self.set_attached(name, on))
        if not collections:
            self.menu.addAction("No collections yet").setEnabled(False)
        self.menu.addSeparator()
        self.menu.addAction("Manage documents…", self.open_window)

    def set_attached(self, name: str, attached: bool) -> None:
        names = [n for n in self.attached if n.casefold() != name.casefold()]
        if attached:
            names.append(name)
        chat = self.window.assistant
        chat.options = chat.options.model_copy(update={"documents": names})
        if self.window.conversation_id:
            self.window.spawn(chat.attach(self.window.conversation_id))
        self.update_label()
        self.prepare()

    def prepare(self) -> None:
        """Get this chat's first question over its documents ready in the background (the
        embedding model, the model's prompt state with the search tool)."""
        names = self.attached
        if not names:
            return
        from desktop_app.core.assistants import find_assistant

        window = self.window
        assistant = find_assistant(window.ctx.settings, window.assistant.picker.current())
        window.controller.prepare_documents(window.picker.current_model(), assistant, names)

    # --- the Documents window ----------------------------------------------------------
    def open_window(self) -> None:
        from desktop_app.ui.documents_window import DocumentsWindow

        window = self.documents_window
        if window is None or not shiboken6.isValid(window):
            window = DocumentsWindow(self.window.ctx.documents(), self.window.spawn, self.window)
            window.changed.connect(self.update_label)
            self.documents_window = window
        window.refresh()
        window.show()
        window.raise_()
        window.activateWindow()

    # --- citations ---------------------------------------------------------------------
    def open_citation(self, passage: Any) -> None:
        """Show the cited document at the cited place (or say why it cannot be)."""
        from desktop_app.ui.document_viewer import DocumentViewer

        path = self.window.ctx.documents().locate(passage.collection, passage.relative_path)
        if path is None:
            self.window.show_error(
                f"{passage.label} is no longer there (moved, deleted, or its collection was "
                f"removed). The passage that was cited:\n\n{passage.text}")
            return
        viewer = DocumentViewer(path, passage, self.window)
        self.viewers = [v for v in self.viewers if shiboken6.isValid(v)] + [viewer]
        viewer.show()
        self.window.spawn(viewer.load())

    # --- watching ----------------------------------------------------------------------
    def start_watching(self) -> None:
        """Rescan the collections now and every ``WATCH_INTERVAL`` s (worker thread)."""
        if self._watch is None:
            library = self.window.ctx.documents()
            self._watch = asyncio.ensure_future(library.watch(interval=WATCH_INTERVAL))

    def stop_watching(self) -> None:
        if self._watch is not None:
            self._watch.cancel()
            self._watch = None
