"""The main window's keyboard shortcuts, in one table: registered from it, and listed
from it in the dialog F1 opens (so the list cannot drift from what the keys do)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QHeaderView,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

#: Keys handled by widgets themselves (the message box, the Compare and Models windows).
ELSEWHERE = [
    ("Enter", "Send the message"),
    ("Shift+Enter", "New line in the message"),
    ("Ctrl+Shift+Space", "Dictate (start or stop)"),
    ("Ctrl+Enter", "Compare window: run the prompt on the ticked models"),
    ("Esc", "Compare window: stop; Models window: close"),
    ("Ctrl+W", "Compare or Models window: close"),
]


def window_shortcuts(window: Any) -> list[tuple[str, str, Callable[[], Any]]]:
    """(keys, what they do, slot) for the main window."""
    return [
        ("Esc", "Stop the answer (or cancel an edit or dictation)", window._escape),
        ("Ctrl+N", "New conversation", window.new_conversation),
        ("Ctrl+F", "Search conversations", window.sidebar.search.setFocus),
        ("Ctrl+,", "Settings", window.open_settings),
        ("Ctrl+Shift+M", "Compare models", window.open_compare),
        ("Ctrl+Shift+D", "Documents", window.documents.open_window),
        ("F1", "This list of shortcuts", lambda: show_shortcuts(window)),
        ("Ctrl+Q", "Quit", window.close),
    ]


def install(window: Any) -> None:
    for keys, _what, slot in window_shortcuts(window):
        QShortcut(QKeySequence(keys), window).activated.connect(slot)


def show_shortcuts(window: Any) -> QDialog:
    rows = [(keys, what) for keys, what, _slot in window_shortcuts(window)] + ELSEWHERE
    dialog = ShortcutsDialog(rows, window)
    window.shortcuts_dialog = dialog
    dialog.open()
    return dialog


class ShortcutsDialog(QDialog):
    def __init__(self, rows: list[tuple[str, str]], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Keyboard shortcuts")
        self.table = QTableWidget(len(rows), 2)
        self.table.setHorizontalHeaderLabels(["Keys", "Does"])
        self.table.verticalHeader().hide()
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        for row, (keys, what) in enumerate(rows):
            native = QKeySequence(keys).toString(QKeySequence.SequenceFormat.NativeText)
            self.table.setItem(row, 0, QTableWidgetItem(native or keys))
            self.table.setItem(row, 1, QTableWidgetItem(what))
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.table)
        layout.addWidget(buttons)
        self.resize(560, 420)
        self.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose, False)
