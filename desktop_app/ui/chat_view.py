"""The scrolling list of exchanges in one conversation, with an empty state.

It sticks to the bottom while an answer streams, unless the user scrolled up to read
something (then it leaves the scroll position alone). Long conversations only build the
widgets of the most recent messages; "Show earlier messages" builds more on demand.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QFrame,
    QLabel,
    QPushButton,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from desktop_app.ui.message_widgets import AssistantTurn, UserMessage

#: How many exchanges are built when a conversation opens (more on request).
INITIAL_WIDGETS = 60

EXAMPLE_PROMPTS = (
    "What is 17.5% of 2,340?",
    "Write a Python function that checks whether a string is a palindrome.",
    "Make an HTML table of the planets and their moons.",
)


class EmptyState(QFrame):
    """What a new conversation shows: what this is and a few things to try."""

    example_chosen = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("EmptyState")
        layout = QVBoxLayout(self)
        layout.addStretch(1)
        title = QLabel("How can I help?")
        title.setObjectName("EmptyTitle")
        title.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.subtitle = QLabel("Runs on this computer. Nothing you type leaves it.")
        self.subtitle.setObjectName("Muted")
        self.subtitle.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.subtitle.setWordWrap(True)
        layout.addWidget(title)
        layout.addWidget(self.subtitle)
        layout.addSpacing(16)
        self.example_buttons: list[QPushButton] = []
        for prompt in EXAMPLE_PROMPTS:
            button = QPushButton(prompt)
            button.setFlat(False)
            button.clicked.connect(lambda _=False, p=prompt: self.example_chosen.emit(p))
            layout.addWidget(button, 0, Qt.AlignmentFlag.AlignHCenter)
            self.example_buttons.append(button)
        layout.addStretch(2)

    def set_model(self, name: str, local: bool | None) -> None:
        """``local`` None: unknown (a custom model), say nothing about where it runs."""
        where = {True: "Runs on this computer; nothing you type leaves it.",
                 False: "Messages are sent to this model's server.", None: ""}[local]
        self.subtitle.setText(f"Model: {name}. {where}".strip())


class ChatView(QScrollArea):
    """A conversation's exchanges, newest at the bottom."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("ChatScroll")
        self.setWidgetResizable(True)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.content = QWidget()
        self.content.setObjectName("ChatContent")
        self._layout = QVBoxLayout(self.content)
        self._layout.setContentsMargins(24, 16, 24, 16)
        self._layout.setSpacing(10)
        self.more_button = QPushButton("Show earlier messages")
        self.more_button.hide()
        self.more_button.clicked.connect(self._show_more)
        self._layout.addWidget(self.more_button, 0, Qt.AlignmentFlag.AlignHCenter)
        self.empty = EmptyState(self.content)
        self._layout.addWidget(self.empty, 1)
        self._layout.addStretch(0)
        self.setWidget(self.content)
        self._stick = True
        self._pending_builders: list[Callable[[], list[QWidget]]] = []
        self.verticalScrollBar().valueChanged.connect(self._on_scrolled)
        self.verticalScrollBar().rangeChanged.connect(self._on_range_changed)

    # --- content -------------------------------------------------------------------------------
    def clear(self) -> None:
        for widget in self.items():
            self._layout.removeWidget(widget)
            widget.deleteLater()
        self._pending_builders = []
        self.more_button.hide()
        self._set_empty(True)
        self._stick = True

    def items(self) -> list[QWidget]:
        """The message widgets shown, top to bottom."""
        out = []
        for i in range(self._layout.count()):
            w = self._layout.itemAt(i).widget()
            if w is not None and w is not self.empty and w is not self.more_button:
                out.append(w)
        return out

    def _set_empty(self, empty: bool) -> None:
        # The empty state takes the free height (centred); messages sit at the top.
        self.empty.setVisible(empty)
        self._layout.setStretch(self._layout.count() - 1, 0 if empty else 1)

    def add(self, widget: QWidget) -> QWidget:
        """Append a message widget at the bottom."""
        self._set_empty(False)
        self._layout.insertWidget(self._layout.count() - 1, widget)
        return widget

    def add_user(self, text: str, message_id: int | None = None) -> UserMessage:
        widget = UserMessage(text, message_id)
        self.add(widget)
        self._stick = True
        self.scroll_to_bottom()
        return widget

    def add_assistant(self) -> AssistantTurn:
        turn = AssistantTurn()
        turn.answer.rendered.connect(self._follow)
        self.add(turn)
        return turn

    def set_history(self, builders: list[Callable[[], list[QWidget]]]) -> None:
        """Show a stored conversation: ``builders`` each build one exchange's widgets.

        Only the last ``INITIAL_WIDGETS`` are built now; the rest wait for the button.
        """
        self.clear()
        self._pending_builders = builders[:-INITIAL_WIDGETS] if len(builders) > INITIAL_WIDGETS else []
        for build in builders[-INITIAL_WIDGETS:]:
            for widget in build():
                self.add(widget)
        self.more_button.setVisible(bool(self._pending_builders))
        self._stick = True  # the range grows as widgets lay out; _on_range_changed follows it
        self.scroll_to_bottom()

    def _show_more(self) -> None:
        batch = self._pending_builders[-INITIAL_WIDGETS:]
        self._pending_builders = self._pending_builders[:-INITIAL_WIDGETS]
        index = self._layout.indexOf(self.more_button) + 1
        for build in batch:
            for widget in build():
                self._layout.insertWidget(index, widget)
                index += 1
        self.more_button.setVisible(bool(self._pending_builders))

    def remove_from(self, widget: QWidget) -> None:
        """Remove ``widget`` and everything below it (regenerate / edit and resend)."""
        items = self.items()
        if widget not in items:
            return
        for w in items[items.index(widget):]:
            self._layout.removeWidget(w)
            w.deleteLater()
        if not self.items():
            self._set_empty(True)

    # --- scrolling -----------------------------------------------------------------------------
    def _on_scrolled(self, value: int) -> None:
        bar = self.verticalScrollBar()
        self._stick = value >= bar.maximum() - 24

    def _on_range_changed(self, _min: int, maximum: int) -> None:
        if self._stick:
            self.verticalScrollBar().setValue(maximum)

    def _follow(self) -> None:
        if self._stick:
            self.scroll_to_bottom()

    def scroll_to_bottom(self) -> None:
        bar = self.verticalScrollBar()
        bar.setValue(bar.maximum())
