"""The conversation list: newest first, full-text search, new / rename / archive / delete.

Deleting moves a conversation to the store's trash and offers Undo for a few seconds.
Search goes to the store's FTS index (as you type, debounced) and lists matching messages
with a snippet; choosing one opens its conversation.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

from PySide6.QtCore import QPoint, Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QFrame,
    QHBoxLayout,
    QInputDialog,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QMenu,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from desktop_app.core.store.async_store import AsyncStore
from desktop_app.core.store.records import Conversation, SearchHit
from desktop_app.ui.error_funnel import user_message

UNDO_SECONDS = 8
_ID_ROLE = Qt.ItemDataRole.UserRole


def _age(timestamp: float) -> str:
    seconds = max(0.0, time.time() - timestamp)
    if seconds < 60:
        return "just now"
    if seconds < 3600:
        return f"{int(seconds // 60)} min ago"
    if seconds < 86400:
        return f"{int(seconds // 3600)} h ago"
    return time.strftime("%d %b", time.localtime(timestamp))


class Sidebar(QFrame):
    """Lists conversations; emits which one to open."""

    conversation_selected = Signal(str)
    new_requested = Signal()
    settings_requested = Signal()
    models_requested = Signal()
    conversation_deleted = Signal(str)

    def __init__(self, store: AsyncStore, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("Sidebar")
        self.store = store
        self.conversations: list[Conversation] = []
        self.hits: list[SearchHit] = []
        self._current: str | None = None
        self._undo_id: str | None = None
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 10, 8, 8)
        self.new_button = QPushButton("+  New chat")
        self.new_button.setObjectName("Primary")
        self.new_button.clicked.connect(self.new_requested.emit)
        layout.addWidget(self.new_button)
        self.search = QLineEdit()
        self.search.setPlaceholderText("Search all messages…")
        self.search.setClearButtonEnabled(True)
        self._debounce = QTimer(self)
        self._debounce.setSingleShot(True)
        self._debounce.setInterval(200)
        self._debounce.timeout.connect(lambda: self._spawn(self.refresh()))
        self.search.textChanged.connect(lambda _: self._debounce.start())
        layout.addWidget(self.search)
        self.list = QListWidget()
        self.list.setWordWrap(True)
        # Long titles wrap (or are cut), they never make the sidebar scroll sideways.
        self.list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.list.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.list.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.list.customContextMenuRequested.connect(self._menu)
        self.list.itemActivated.connect(self._activated)
        self.list.itemClicked.connect(self._activated)
        layout.addWidget(self.list, 1)
        self.empty = QLabel("No conversations yet.\nStart one with “New chat”.")
        self.empty.setObjectName("Muted")
        self.empty.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.empty.setWordWrap(True)
        layout.addWidget(self.empty, 1, Qt.AlignmentFlag.AlignTop)
        self.undo_bar = QFrame()
        undo = QHBoxLayout(self.undo_bar)
        undo.setContentsMargins(0, 0, 0, 0)
        self.undo_label = QLabel("Conversation deleted")
        self.undo_label.setWordWrap(True)  # a long title wraps in the narrow sidebar
        self.undo_button = QPushButton("Undo")
        self.undo_button.clicked.connect(lambda: self._spawn(self.undo_delete()))
        undo.addWidget(self.undo_label, 1)
        undo.addWidget(self.undo_button)
        self.undo_bar.hide()
        layout.addWidget(self.undo_bar)
        self._undo_timer = QTimer(self)
        self._undo_timer.setSingleShot(True)
        self._undo_timer.timeout.connect(self.undo_bar.hide)
        bottom = QHBoxLayout()
        self.show_archived = QCheckBox("Archived")
        self.show_archived.setToolTip("Show archived conversations instead")
        self.show_archived.toggled.connect(lambda _: self._spawn(self.refresh()))
        self.settings_button = QPushButton("Settings")
        self.settings_button.clicked.connect(self.settings_requested.emit)
        # Beside Settings, not in the chat header: the header's width decides whether the
        # artifact pane fits beside the sidebar.
        self.models_button = QPushButton("Models")
        self.models_button.setToolTip("Find, download, add, measure and remove local models")
        self.models_button.clicked.connect(self.models_requested.emit)
        bottom.addWidget(self.show_archived)
        bottom.addStretch(1)
        bottom.addWidget(self.models_button)
        bottom.addWidget(self.settings_button)
        layout.addLayout(bottom)
        self.status = QLabel("")
        self.status.setObjectName("Muted")
        self.status.setWordWrap(True)
        self.status.hide()
        layout.addWidget(self.status)
        self._tasks: set[asyncio.Future[Any]] = set()

    def _spawn(self, coro: Any) -> None:
        task = asyncio.ensure_future(self._guard(coro))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _guard(self, coro: Any) -> None:
        try:
            await coro
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - every error is shown (error_funnel)
            self.status.setText(user_message(exc, "sidebar"))
            self.status.show()

    # --- listing --------------------------------------------------------------------------------
    async def refresh(self) -> None:
        """Re-read the list (or the search results) from the store."""
        text = self.search.text().strip()
        self.list.clear()
        if text:
            hits = await self.store.search(text, limit=100, highlight=("«", "»"))
            # One row per conversation: its best-ranked message (hits come best first).
            best: dict[str, SearchHit] = {}
            for hit in hits:
                best.setdefault(hit.conversation_id, hit)
            self.hits = list(best.values())
            for hit in self.hits:
                snippet = " ".join(hit.snippet.split())
                item = QListWidgetItem(f"{hit.conversation_title or 'Untitled'}\n{snippet}")
                item.setData(_ID_ROLE, hit.conversation_id)
                item.setToolTip(snippet)
                self.list.addItem(item)
                if hit.conversation_id == self._current:
                    self.list.setCurrentItem(item)
            self.empty.setText(f"Nothing matches “{text}”.")
            self._show_empty(not self.hits)
            return
        self.conversations = await self.store.list_conversations(
            archived=self.show_archived.isChecked())
        for conv in self.conversations:
            title = conv.title or "New conversation"
            pin = "📌 " if conv.pinned else ""
            item = QListWidgetItem(f"{pin}{title}\n{_age(conv.updated_at)}")
            item.setData(_ID_ROLE, conv.id)
            item.setToolTip(title)
            self.list.addItem(item)
            if conv.id == self._current:
                self.list.setCurrentItem(item)
        self.empty.setText("No archived conversations." if self.show_archived.isChecked()
                           else "No conversations yet.\nStart one with “New chat”.")
        self._show_empty(not self.conversations)

    def _show_empty(self, empty: bool) -> None:
        # The explanation takes the list's place, at the top where people look.
        self.empty.setVisible(empty)
        self.list.setVisible(not empty)

    def set_current(self, conversation_id: str | None) -> None:
        """Highlight the open conversation; None (a new, unsaved chat) highlights none."""
        self._current = conversation_id
        for i in range(self.list.count()):
            item = self.list.item(i)
            if item.data(_ID_ROLE) == conversation_id:
                self.list.setCurrentItem(item)
                return
        self.list.setCurrentItem(None)
        self.list.clearSelection()

    def ids(self) -> list[str]:
        return [self.list.item(i).data(_ID_ROLE) for i in range(self.list.count())]

    def _activated(self, item: QListWidgetItem) -> None:
        conversation_id = item.data(_ID_ROLE)
        if conversation_id and conversation_id != self._current:
            self._current = conversation_id
            self.conversation_selected.emit(conversation_id)

    # --- actions --------------------------------------------------------------------------------
    def _menu(self, pos: QPoint) -> None:
        item = self.list.itemAt(pos)
        if item is None:
            return
        conversation_id = item.data(_ID_ROLE)
        menu = QMenu(self)
        menu.addAction("Rename…", lambda: self._rename_dialog(conversation_id))
        archived = self.show_archived.isChecked()
        menu.addAction("Unarchive" if archived else "Archive",
                       lambda: self._spawn(self.archive(conversation_id, not archived)))
        menu.addAction("Export as Markdown…", lambda: self._export_dialog(conversation_id, "md"))
        menu.addAction("Export as JSON…", lambda: self._export_dialog(conversation_id, "json"))
        menu.addSeparator()
        menu.addAction("Delete", lambda: self._spawn(self.delete(conversation_id)))
        menu.popup(self.list.viewport().mapToGlobal(pos))

    def _rename_dialog(self, conversation_id: str) -> None:
        current = next((c.title for c in self.conversations if c.id == conversation_id), "")
        dialog = QInputDialog(self)
        dialog.setWindowTitle("Rename conversation")
        dialog.setLabelText("Title:")
        dialog.setTextValue(current)
        # Wide enough for a whole title: the default box showed a third of a long one.
        dialog.resize(max(480, dialog.fontMetrics().horizontalAdvance(current) + 80),
                      dialog.sizeHint().height())
        self.rename_box = dialog
        dialog.textValueSelected.connect(
            lambda title: self._spawn(self.rename(conversation_id, title))
            if title.strip() else None)
        dialog.open()

    def _export_dialog(self, conversation_id: str, fmt: str) -> None:
        from PySide6.QtWidgets import QFileDialog

        current = next((c.title for c in self.conversations if c.id == conversation_id), "")
        name = "".join(ch if ch.isalnum() or ch in " -_" else "_" for ch in current)[:60]
        path, _ = QFileDialog.getSaveFileName(
            self, "Export conversation", str(Path.home() / f"{name or 'conversation'}.{fmt}"))
        if path:
            self._spawn(self.export(conversation_id, Path(path), fmt))

    async def export(self, conversation_id: str, path: Path, fmt: str = "md") -> None:
        """Write the conversation as Markdown or JSON (API keys never appear in either)."""
        from desktop_app.core.errors import StorageError
        from desktop_app.core.store.exporting import export_json, export_markdown

        detail = await self.store.load_conversation(conversation_id)
        text = export_json([detail]) if fmt == "json" else export_markdown(detail)
        try:
            await asyncio.to_thread(path.write_text, text, encoding="utf-8")
        except OSError as exc:
            raise StorageError(f"Could not write {path}: {exc.strerror or exc}.",
                               hint="Choose another folder.") from exc
        self.status.setText(f"Exported to {path}")
        self.status.show()

    async def rename(self, conversation_id: str, title: str) -> None:
        await self.store.rename_conversation(conversation_id, title)
        await self.refresh()

    async def archive(self, conversation_id: str, archived: bool = True) -> None:
        await self.store.set_archived(conversation_id, archived)
        await self.refresh()

    async def delete(self, conversation_id: str) -> None:
        """Move to the trash; Undo brings it back for ``UNDO_SECONDS``."""
        conv = await self.store.delete_conversation(conversation_id)
        self._undo_id = conversation_id
        title = conv.title or "conversation"
        short = title if len(title) <= 40 else title[:39].rstrip() + "…"
        self.undo_label.setText(f"Deleted “{short}”")
        self.undo_label.setToolTip(title)
        self.undo_bar.show()
        self._undo_timer.start(UNDO_SECONDS * 1000)
        self.conversation_deleted.emit(conversation_id)
        await self.refresh()

    async def undo_delete(self) -> None:
        if self._undo_id is None:
            return
        conversation_id, self._undo_id = self._undo_id, None
        await self.store.restore_conversation(conversation_id)
        self.undo_bar.hide()
        await self.refresh()
