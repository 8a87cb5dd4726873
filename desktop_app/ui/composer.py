"""The message input: multi-line, Enter sends, Shift+Enter adds a line, Esc stops a run.

While a run works the Send button becomes "Interrupt": what is sent then goes to the
running agent as an interrupt (shown inline in the answer being built), and Stop appears.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from desktop_app.ui.context_gauge import ContextGauge

MAX_LINES = 10


class ComposerInput(QPlainTextEdit):
    """The text field; grows with its content up to ``MAX_LINES`` lines."""

    submit = Signal()
    escape = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("ComposerInput")
        self.setPlaceholderText("Message — Enter to send, Shift+Enter for a new line")
        self.setTabChangesFocus(True)
        self.textChanged.connect(self._grow)
        self._grow()

    def keyPressEvent(self, event: QKeyEvent) -> None:
        key = event.key()
        if key in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            if event.modifiers() & Qt.KeyboardModifier.ShiftModifier:
                self.insertPlainText("\n")
            else:
                self.submit.emit()
            return
        if key == Qt.Key.Key_Escape:
            self.escape.emit()
            return
        super().keyPressEvent(event)

    def _grow(self) -> None:
        # QPlainTextDocumentLayout measures in lines, wrapped lines included.
        lines = max(1, int(self.document().documentLayout().documentSize().height()))
        self.setVerticalScrollBarPolicy(
            Qt.ScrollBarPolicy.ScrollBarAsNeeded if lines > MAX_LINES
            else Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        margins = 2 * int(self.document().documentMargin()) + 2 * self.frameWidth() + 14
        self.setFixedHeight(self.fontMetrics().lineSpacing() * min(lines, MAX_LINES) + margins)

    def resizeEvent(self, event) -> None:  # re-wrap changes the line count
        super().resizeEvent(event)
        self._grow()


class Composer(QFrame):
    """Input plus Send / Stop, aware of whether a run is working."""

    send_requested = Signal(str)
    interrupt_requested = Signal(str)
    stop_requested = Signal()
    #: The user gave up editing an earlier message (Cancel or Esc).
    edit_cancelled = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("Composer")
        outer = QVBoxLayout(self)
        outer.setContentsMargins(16, 8, 16, 10)
        outer.setSpacing(4)
        # Shown while an earlier message is being edited: sending replaces it.
        self.editing_bar = QFrame(self)
        editing = QHBoxLayout(self.editing_bar)
        editing.setContentsMargins(0, 0, 0, 0)
        self.editing_label = QLabel("Editing your earlier message — Send replaces it and the "
                                    "answers after it.")
        self.editing_label.setObjectName("Muted")
        self.editing_label.setWordWrap(True)
        cancel = QPushButton("Cancel edit")
        cancel.setToolTip("Keep the conversation as it is (Esc)")
        cancel.clicked.connect(self.edit_cancelled.emit)
        editing.addWidget(self.editing_label, 1)
        editing.addWidget(cancel)
        self.editing_bar.hide()
        outer.addWidget(self.editing_bar)
        row = QHBoxLayout()
        self.input = ComposerInput(self)
        self.input.submit.connect(self.submit)
        self.input.escape.connect(self._escape)
        self.send_button = QPushButton("Send")
        self.send_button.setObjectName("Primary")
        self.send_button.clicked.connect(self.submit)
        self.stop_button = QPushButton("Stop")
        self.stop_button.setObjectName("Danger")
        self.stop_button.setToolTip("Stop the answer (Esc); what was written so far is kept")
        self.stop_button.clicked.connect(self.stop_requested.emit)
        self.stop_button.hide()
        row.addWidget(self.input, 1)
        row.addWidget(self.send_button, 0, Qt.AlignmentFlag.AlignBottom)
        row.addWidget(self.stop_button, 0, Qt.AlignmentFlag.AlignBottom)
        outer.addLayout(row)
        self.hint = QLabel("")
        self.hint.setObjectName("Muted")
        self.hint.hide()
        bottom = QHBoxLayout()
        #: Buttons for what goes with a message (the Documents button), left of the hint.
        self.accessories = QHBoxLayout()
        bottom.addLayout(self.accessories)
        bottom.addWidget(self.hint, 1)
        self.gauge = ContextGauge(self)
        bottom.addWidget(self.gauge, 0, Qt.AlignmentFlag.AlignRight)
        outer.addLayout(bottom)
        self.input.textChanged.connect(lambda: self.gauge.update_draft(self.text()))
        self._running = False

    @property
    def running(self) -> bool:
        return self._running

    def set_running(self, running: bool) -> None:
        """Switch between idle (Send) and working (Interrupt + Stop)."""
        self._running = running
        self.stop_button.setVisible(running)
        self.send_button.setText(self._send_label())
        self.send_button.setToolTip(
            "Send this to the running agent; it reads it before its next step"
            if running else "Send (Enter)")
        self.hint.setText("Working… messages you send now reach the agent as interrupts. "
                          "Esc stops." if running else "")
        self.hint.setVisible(running)

    def set_editing(self, editing: bool) -> None:
        """Show or hide the "editing an earlier message" bar."""
        self.editing_bar.setVisible(editing)
        self.send_button.setText(self._send_label())

    def _send_label(self) -> str:
        if self._running:
            return "Interrupt"
        return "Resend" if self.editing else "Send"

    @property
    def editing(self) -> bool:
        return not self.editing_bar.isHidden()

    def set_text(self, text: str) -> None:
        self.input.setPlainText(text)
        self.input.moveCursor(self.input.textCursor().MoveOperation.End)
        self.input.setFocus()

    def text(self) -> str:
        return self.input.toPlainText()

    def restore_draft(self, text: str) -> None:
        """A message that could not be sent comes back, unless something new was typed."""
        if not self.input.toPlainText().strip():
            self.input.setPlainText(text)

    def submit(self) -> None:
        text = self.input.toPlainText().strip()
        if not text:
            return
        self.input.clear()
        if self._running:
            self.interrupt_requested.emit(text)
        else:
            self.send_requested.emit(text)

    def _escape(self) -> None:
        if self._running:
            self.stop_requested.emit()
