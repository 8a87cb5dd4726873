"""Editing an earlier message: which one, what the composer shows, and calling it off.

Sending while editing replaces that message and everything after it (the window does the
replacing); until then the message is marked and the composer says what Send will do.
"""

from __future__ import annotations

import shiboken6

from desktop_app.ui.composer import Composer
from desktop_app.ui.message_widgets import UserMessage


class EditSession:
    """At most one message being edited in ``composer``."""

    def __init__(self, composer: Composer) -> None:
        self.composer = composer
        self.widget: UserMessage | None = None
        composer.edit_cancelled.connect(self.cancel)

    @property
    def active(self) -> bool:
        return self.widget is not None

    def start(self, widget: UserMessage) -> None:
        self.end()
        self.widget = widget
        widget.set_editing(True)
        self.composer.set_editing(True)
        self.composer.set_text(widget.text)

    def take(self) -> UserMessage | None:
        """The edited message, for sending: the session ends."""
        widget = self.widget
        self.end()
        return widget

    def end(self) -> None:
        if self.widget is not None and shiboken6.isValid(self.widget):
            self.widget.set_editing(False)
        self.widget = None
        self.composer.set_editing(False)

    def cancel(self) -> None:
        """Keep the conversation as it is; the draft goes."""
        if self.widget is not None:
            self.end()
            self.composer.set_text("")
