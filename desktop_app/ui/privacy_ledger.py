"""What left this computer, in the window (issue 25): a line under each answer that sent
something ("Sent to api.example.com · 3.2 kB"), and a window listing the privacy ledger
with the exact content of each request, a filter, export and clear.

The ledger is read off the Qt thread (``asyncio.to_thread``); rows are written by the
egress point itself (``core/egress``), never by the window.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QDialog,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMessageBox,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from desktop_app.core import egress
from desktop_app.core.egress import EgressRecord, human_bytes

_COLUMNS = ("When", "Where", "Purpose", "Sent", "Received", "Chat")


def sent_summary(rows: Sequence[EgressRecord]) -> str:
    """One line for an answer: where its requests went and how much they carried."""
    remote = [row for row in rows if not row.local]
    shown = remote or list(rows)
    hosts = ", ".join(dict.fromkeys(row.host for row in shown))
    size = human_bytes(sum(row.bytes_sent for row in shown))
    if remote:
        return f"Sent to {hosts} · {size}"
    return f"Stayed on this computer ({hosts}) · {size}"


async def show_sent(turn: Any) -> None:
    """Give a finished answer its "Sent to …" line, from the ledger rows it caused."""
    if turn.message_id is None:
        return
    rows = await asyncio.to_thread(egress.ledger().entries, message_id=str(turn.message_id))
    if rows:
        turn.set_sent(sent_summary(rows))


class LedgerWindow(QDialog):
    """The privacy ledger: every request, its destination and purpose, and what it sent."""

    def __init__(self, spawn: Callable[[Any], Any], parent: QWidget | None = None, *,
                 message_id: str | None = None, store: Any = None) -> None:
        super().__init__(parent)
        self._spawn = spawn
        self._message_id = message_id
        self._store = store
        self.rows: list[EgressRecord] = []
        self._titles: dict[str, str] = {}
        self.setWindowTitle("What left this computer")
        self.resize(920, 560)
        self.summary = QLabel(self)
        self.summary.setWordWrap(True)
        self.filter = QLineEdit(self)
        self.filter.setPlaceholderText("Filter by host, purpose or content")
        self.filter.textChanged.connect(self._fill)
        self.local = QCheckBox("Show requests to this computer too", self)
        self.local.setChecked(True)
        self.local.toggled.connect(self._fill)
        self.table = QTableWidget(0, len(_COLUMNS), self)
        self.table.setHorizontalHeaderLabels(list(_COLUMNS))
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.horizontalHeader().setStretchLastSection(True)
        self.table.verticalHeader().hide()
        self.table.itemSelectionChanged.connect(self._show_content)
        self.content = QPlainTextEdit(self)
        self.content.setReadOnly(True)
        self.content.setPlaceholderText("Select a request to see exactly what it sent.")
        split = QSplitter(Qt.Orientation.Vertical, self)
        split.addWidget(self.table)
        split.addWidget(self.content)
        split.setSizes([300, 220])
        self.export_button = QPushButton("Export…", self)
        self.export_button.clicked.connect(self._export)
        self.clear_button = QPushButton("Clear the ledger…", self)
        self.clear_button.clicked.connect(self._clear)
        close = QPushButton("Close", self)
        close.clicked.connect(self.accept)
        top = QHBoxLayout()
        top.addWidget(self.filter, 1)
        top.addWidget(self.local)
        bottom = QHBoxLayout()
        bottom.addWidget(self.export_button)
        bottom.addWidget(self.clear_button)
        bottom.addStretch(1)
        bottom.addWidget(close)
        layout = QVBoxLayout(self)
        layout.addWidget(self.summary)
        layout.addLayout(top)
        layout.addWidget(split, 1)
        layout.addLayout(bottom)
        self.summary.setText("Reading the ledger…")

    async def load(self) -> None:
        self.rows = await asyncio.to_thread(egress.ledger().entries, message_id=self._message_id)
        if self._store is not None:
            try:
                chats = await self._store.list_conversations()
            except Exception:  # noqa: BLE001 - the ids are shown instead
                chats = []
            self._titles = {chat.id: chat.title for chat in chats}
        self._fill()

    def visible_rows(self) -> list[EgressRecord]:
        needle = self.filter.text().strip().lower()
        rows = [row for row in self.rows if self.local.isChecked() or not row.local]
        if needle:
            rows = [row for row in rows if needle in row.host.lower()
                    or needle in row.purpose.lower() or needle in row.content.lower()]
        return rows

    def _fill(self) -> None:
        rows = self.visible_rows()
        self.table.setRowCount(len(rows))
        for index, row in enumerate(reversed(rows)):  # newest first
            where = f"{row.host} (this computer)" if row.local else row.host
            cells = (egress.local_time(row.time), where, row.purpose, human_bytes(row.bytes_sent),
                     human_bytes(row.bytes_received), self._chat_name(row.conversation_id))
            for column, text in enumerate(cells):
                item = QTableWidgetItem(text)
                item.setData(Qt.ItemDataRole.UserRole, row.id)
                self.table.setItem(index, column, item)
        remote = [row for row in self.rows if not row.local]
        scope = "this answer" if self._message_id else "the ledger"
        self.summary.setText(
            f"{len(remote)} request{'s' if len(remote) != 1 else ''} in {scope} left this "
            f"computer ({human_bytes(sum(r.bytes_sent for r in remote))} sent); "
            f"{len(self.rows) - len(remote)} went to servers on this computer. API keys are "
            f"never kept here. The ledger: {egress.ledger().path}")
        self.table.resizeColumnsToContents()

    def _chat_name(self, conversation_id: str | None) -> str:
        if conversation_id is None:
            return "— (not a chat: a download, a search, the command line)"
        return self._titles.get(conversation_id) or f"deleted chat {conversation_id[:8]}"

    def _show_content(self) -> None:
        items = self.table.selectedItems()
        if not items:
            return
        wanted = items[0].data(Qt.ItemDataRole.UserRole)
        row = next((r for r in self.rows if r.id == wanted), None)
        if row is not None:
            self.content.setPlainText(f"{row.method} {row.url}\n\n{_pretty(row.content)}")

    def _export(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Export the ledger",
                                              "privacy-ledger.json", "JSON (*.json)")
        if path:
            self._spawn(self.export_to(Path(path)))

    async def export_to(self, path: Path) -> None:
        data = json.dumps([row.to_dict() for row in self.visible_rows()], indent=2,
                          ensure_ascii=False)
        await asyncio.to_thread(path.write_text, data, encoding="utf-8")

    def _clear(self) -> None:
        answer = QMessageBox.question(
            self, "Clear the ledger",
            "Delete the record of every request that left this computer? This cannot be "
            "undone.")
        if answer == QMessageBox.StandardButton.Yes:
            self._spawn(self.clear())

    async def clear(self) -> None:
        await asyncio.to_thread(egress.ledger().clear)
        await self.load()


def _pretty(content: str) -> str:
    try:
        return json.dumps(json.loads(content), indent=2, ensure_ascii=False)
    except ValueError:
        return content


class LedgerButton(QToolButton):
    """The status bar's way into the ledger, beside the offline switch."""

    def __init__(self, spawn: Callable[[Any], Any], parent: QWidget | None = None,
                 store: Any = None) -> None:
        super().__init__(parent)
        self._spawn = spawn
        self._store = store
        self.setObjectName("LedgerButton")
        self.setText("What left this computer")
        self.setToolTip("Every request the app sent off this computer: where, why, and "
                        "exactly what")
        self.clicked.connect(lambda: self.open())

    def open(self, message_id: str | None = None) -> LedgerWindow:
        window = LedgerWindow(self._spawn, self.window(), message_id=message_id,
                              store=self._store)
        window.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        window.show()
        self._spawn(window.load())
        return window
