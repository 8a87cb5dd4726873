"""A thin banner above the chat for long work: preparing and loading models, MCP servers."""

from __future__ import annotations

from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QProgressBar, QWidget


class StatusBanner(QFrame):
    """Model preparation / loading progress, above the chat."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("StatusBanner")
        layout = QHBoxLayout(self)
        layout.setContentsMargins(16, 4, 16, 4)
        self.label = QLabel("")
        self.label.setWordWrap(True)
        self.bar = QProgressBar()
        self.bar.setMaximumWidth(220)
        self.bar.setTextVisible(False)
        layout.addWidget(self.label, 1)
        layout.addWidget(self.bar)
        self.hide()

    def set_status(self, text: str) -> None:
        self.label.setText(text)
        self.setVisible(bool(text))

    def set_progress(self, done: int, total: int) -> None:
        if total <= 0:
            self.bar.setRange(0, 0)  # busy indicator
        else:
            self.bar.setRange(0, 1000)
            self.bar.setValue(int(1000 * done / total))
