"""A collapsible card for one tool call: name, arguments, observation or error, elapsed.

Created from an ``IterationStart`` step event (shown as running) and completed by the
matching ``IterationDone``. Collapsed by default once done, so a long tool loop stays a
compact list of one-line headers; errors open the card so the user sees what failed.
"""

from __future__ import annotations

import json
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QFrame,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QSizePolicy,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from desktop_app.ui.markdown_view import _monospace

#: Observations longer than this are cut in the card (the full text is in the tooltip/copy).
MAX_SHOWN = 6000


def format_args(args: Any) -> str:
    """Tool arguments as readable, indented JSON (or as given when not JSON-able)."""
    if isinstance(args, str):
        try:
            args = json.loads(args)
        except ValueError:
            return args
    try:
        return json.dumps(args, indent=2, ensure_ascii=False)
    except (TypeError, ValueError):
        return repr(args)


def _text_box(text: str) -> QPlainTextEdit:
    box = QPlainTextEdit()
    box.setReadOnly(True)
    box.setFont(_monospace())
    box.setPlainText(text)
    box.setFrameShape(QFrame.Shape.NoFrame)
    lines = text.count("\n") + 1
    shown = min(lines, 14)
    if lines <= 14:
        box.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
    margins = 2 * int(box.document().documentMargin()) + 2 * box.frameWidth() + 4
    box.setFixedHeight(box.fontMetrics().lineSpacing() * shown + margins)
    return box


class ToolCard(QFrame):
    """One tool call, live: running → done (✓) or failed (✗)."""

    def __init__(self, tool_name: str, args: Any, iteration: int, *, call_id: str | None = None,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("ToolCard")
        self.tool_name = tool_name
        self.iteration = iteration
        self.call_id = call_id
        self.args_text = format_args(args)
        self.observation = ""
        self.error: str | None = None
        self.elapsed: float | None = None
        self.status = "running"
        self.actions: list[QPushButton] = []
        #: Whether a "Restore the previous version" button was looked for (restore_previous).
        self.restore_checked = False

        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 4, 6, 6)
        layout.setSpacing(4)
        self.header = QToolButton(self)
        self.header.setObjectName("ToolCardHeader")
        self.header.setCheckable(True)
        self.header.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.header.setArrowType(Qt.ArrowType.RightArrow)
        self.header.toggled.connect(self.set_expanded)
        # The header never widens the chat: long arguments are elided to the card's width.
        self.header.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Fixed)
        self._header_text = ""
        layout.addWidget(self.header)

        self.body = QWidget(self)
        body = QVBoxLayout(self.body)
        body.setContentsMargins(18, 0, 0, 0)
        body.setSpacing(2)
        body.addWidget(QLabel("Arguments"))
        self.args_box = _text_box(self.args_text)
        body.addWidget(self.args_box)
        self.result_label = QLabel("Result")
        self.result_box = _text_box("…")
        body.addWidget(self.result_label)
        body.addWidget(self.result_box)
        layout.addWidget(self.body)
        self.body.setVisible(False)
        self._update_header()

    def add_action(self, label: str, callback: Any) -> QPushButton:
        """A button under the header (e.g. "Restore the previous version")."""
        button = QPushButton(label, self)
        button.setObjectName("ToolCardAction")
        button.clicked.connect(callback)
        self.layout().insertWidget(1, button, 0, Qt.AlignmentFlag.AlignLeft)
        self.actions.append(button)
        return button

    def _update_header(self) -> None:
        marks = {"running": "◐", "done": "✓", "error": "✗"}  # ⏳ is missing from common fonts
        elapsed = f"  ·  {self.elapsed:.2f} s" if self.elapsed is not None else ""
        summary = " ".join(self.args_text.split())
        if len(summary) > 200:
            summary = summary[:199] + "…"
        self._header_text = f"{marks[self.status]}  {self.tool_name}{elapsed}  ·  {summary}"
        self.header.setToolTip(f"Tool call #{self.iteration}: {self.tool_name}")
        self._elide()

    def _elide(self) -> None:
        width = max(80, self.width() - 48)
        metrics = self.header.fontMetrics()
        self.header.setText(metrics.elidedText(self._header_text, Qt.TextElideMode.ElideRight,
                                               width))

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self._elide()

    def set_expanded(self, expanded: bool) -> None:
        self.body.setVisible(expanded)
        self.header.setArrowType(Qt.ArrowType.DownArrow if expanded else Qt.ArrowType.RightArrow)
        if self.header.isChecked() != expanded:
            self.header.setChecked(expanded)

    @property
    def expanded(self) -> bool:
        return self.body.isVisible() or self.header.isChecked()

    def finish(self, observation: str, error: str | None, elapsed: float) -> None:
        """Show the result of the call; open the card when it failed."""
        self.observation = observation
        self.error = error
        self.elapsed = elapsed
        self.status = "error" if error else "done"
        shown = error if error else observation
        if len(shown) > MAX_SHOWN:
            shown = shown[:MAX_SHOWN] + f"\n… ({len(shown) - MAX_SHOWN} more characters)"
        # Document passages are said to be exactly what the model was given: with a hosted
        # model, that is what left the computer.
        label = ("Passages given to the model (with a hosted model: sent to its server)"
                 if self.tool_name == "search_documents" else "Result")
        self.result_label.setText("Error" if error else label)
        replacement = _text_box(shown or "(no output)")
        self.body.layout().replaceWidget(self.result_box, replacement)
        self.result_box.deleteLater()
        self.result_box = replacement
        self._update_header()
        if error:
            self.set_expanded(True)
