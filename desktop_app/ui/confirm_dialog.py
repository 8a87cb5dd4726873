"""Asking before a tool that changes something runs (a ``Confirm`` event).

Non-blocking: the dialog is opened window-modal with ``open()``, never ``exec()``, so the
asyncio loop keeps running (and a Stop still works) while the question is on screen.
"""

from __future__ import annotations

import html
from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialog, QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from desktop_app.core.tools.confirmation import describe_call
from desktop_app.ui.tool_card import _text_box, format_args

if TYPE_CHECKING:
    from desktop_app.core.agent.events import Confirm

#: ``answer(request_id, allow, always)``
AnswerFn = Callable[[str, bool, bool], object]


class ConfirmDialog(QDialog):
    """Allow once / Always allow / Deny for one tool call."""

    def __init__(self, event: Confirm, answer: AnswerFn, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Allow this action?")
        self.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self.confirm = event
        self._answer = answer
        self._answered = False
        layout = QVBoxLayout(self)
        sharing = event.kind == "share"
        if sharing:
            self.setWindowTitle("Send your content off this computer?")
        intro = QLabel("Your files and notes stay on this computer unless you allow this."
                       if sharing else f"The assistant wants to run "
                       f"<b>{html.escape(event.tool_name)}</b>. Allow it?")
        intro.setWordWrap(True)
        layout.addWidget(intro)
        change = QLabel()
        change.setObjectName("ConfirmChange")
        change.setWordWrap(True)
        change.setTextFormat(Qt.TextFormat.PlainText)
        change.setText(event.change or "It can change files or other things on this computer.")
        layout.addWidget(change)
        self.change_label = change
        if event.destroys and not sharing:
            warning = QLabel("This cannot be undone, so it is asked every time, even when you "
                             f"always allow {event.tool_name}.")
            warning.setObjectName("ConfirmWarning")
            warning.setWordWrap(True)
            warning.setTextFormat(Qt.TextFormat.PlainText)
            layout.addWidget(warning)
        shown = (describe_call(event.tool_name, event.tool_args)
                 if isinstance(event.tool_args, dict) else format_args(event.tool_args))
        layout.addWidget(_text_box(shown))
        layout.addStretch(1)
        row = QHBoxLayout()
        self.deny_button = QPushButton("Deny")
        self.always_button = QPushButton(f"Always allow {event.tool_name}")
        self.allow_button = QPushButton("Allow once")
        self.allow_button.setObjectName("Primary")
        self.allow_button.setDefault(True)
        self.deny_button.clicked.connect(lambda: self.decide(False, False))
        self.always_button.clicked.connect(lambda: self.decide(True, True))
        self.allow_button.clicked.connect(lambda: self.decide(True, False))
        if sharing:  # the chat keeps the answer: no "always", no "once"
            self.deny_button.setText("Keep local")
            self.allow_button.setText("Allow for this chat")
            self.always_button.hide()
        row.addWidget(self.deny_button)
        row.addStretch(1)
        row.addWidget(self.always_button)
        row.addWidget(self.allow_button)
        layout.addLayout(row)
        self.resize(520, 300)

    def decide(self, allow: bool, always: bool) -> None:
        if not self._answered:
            self._answered = True
            self._answer(self.confirm.request_id, allow, always)
        self.done(QDialog.DialogCode.Accepted if allow else QDialog.DialogCode.Rejected)

    def reject(self) -> None:  # Esc or closing the window means "no"
        if not self._answered:
            self._answered = True
            self._answer(self.confirm.request_id, False, False)
        super().reject()
