"""The widgets of one exchange: the user's message and the assistant's turn.

An :class:`AssistantTurn` is built live from a run's events: a thinking indicator while the
tool loop runs, tool cards, interrupts the user sent, a "context summarised" divider, the
streamed answer, errors (with what to do), and a footer with the run's numbers.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QSizePolicy,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from desktop_app.core.llm.types import Usage
from desktop_app.ui.markdown_view import MarkdownView
from desktop_app.ui.text_wrap import WrappingText
from desktop_app.ui.tool_card import ToolCard


def format_footer(*, model: str | None, iterations: int, usage: Usage, elapsed: float,
                  cancelled: bool = False, ttft: float | None = None,
                  prompt_tps: float | None = None, output_tps: float | None = None,
                  cut: str | None = None) -> str:
    """``model · 2 iterations · 812 in / 64 out tokens · first word 1.2 s · 3.1 s ·
    prompt 410 tok/s · output 20.6 tok/s``.

    The speeds are the model's own, measured per call (``core/agent/metrics.py``): output
    tokens over the whole run's time (tools included) was neither number.
    """
    parts = [model or "model"]
    parts.append(f"{iterations} iteration{'s' if iterations != 1 else ''}")
    read = f"{usage.prompt_tokens:,}" if usage.prompt_tokens else "?"  # not reported
    parts.append(f"{read} in / {usage.completion_tokens:,} out tokens")
    if ttft is not None:
        parts.append(f"first word {ttft:.1f} s")
    parts.append(f"{elapsed:.1f} s")
    if prompt_tps:
        parts.append(f"prompt {prompt_tps:,.0f} tok/s")
    if output_tps:
        parts.append(f"output {output_tps:.1f} tok/s")
    if cancelled:
        parts.append("stopped by you")
    elif cut == "length":
        parts.append("cut at the length limit")
    elif cut == "repetition":
        parts.append("stopped: the model began repeating itself")
    # Non-breaking spaces inside a part, and word joiners around slashes (Qt breaks lines
    # after "/"): a narrow window wraps between parts, never inside one ("tok/" + "s").
    return "  ·  ".join(part.replace(" ", "\u00a0").replace("/", "\u2060/\u2060")
                        for part in parts)


class UserMessage(QFrame):
    """A user message bubble with an Edit button (edit and resend)."""

    edit_requested = Signal(object)  # self
    #: The user asked for another version of this question and its answers (1-based).
    version_requested = Signal(object, int)  # self, version

    def __init__(self, text: str, message_id: int | None = None,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.message_id = message_id
        self.text = text
        outer = QHBoxLayout(self)
        outer.setContentsMargins(60, 4, 0, 4)
        bubble = QFrame(self)
        bubble.setObjectName("UserBubble")
        inner = QHBoxLayout(bubble)
        inner.setContentsMargins(10, 6, 6, 6)
        # Plain text: what the person typed, exactly ("12*12 and 7*8" is not emphasis).
        self.view = WrappingText(text, bubble)
        inner.addWidget(self.view, 1)
        self.edit_button = QToolButton(bubble)
        self.edit_button.setText("Edit")
        self.edit_button.setAutoRaise(True)
        self.edit_button.setToolTip("Edit this message and send it again")
        self.edit_button.clicked.connect(lambda: self.edit_requested.emit(self))
        inner.addWidget(self.edit_button, 0, Qt.AlignmentFlag.AlignBottom)
        # ‹ 2/3 ›: the versions an edit or a regenerate kept (hidden while there is one).
        self.versions = QWidget(self)
        row = QHBoxLayout(self.versions)
        row.setContentsMargins(0, 0, 0, 0)
        row.setSpacing(0)
        self.previous_button = QToolButton(self.versions)
        self.previous_button.setText("‹")
        self.previous_button.setAutoRaise(True)
        self.previous_button.setToolTip("The previous version of this question and its answer")
        self.version_label = QLabel(self.versions)
        self.version_label.setObjectName("Muted")
        self.next_button = QToolButton(self.versions)
        self.next_button.setText("›")
        self.next_button.setAutoRaise(True)
        self.next_button.setToolTip("The next version of this question and its answer")
        for widget in (self.previous_button, self.version_label, self.next_button):
            row.addWidget(widget)
        self.previous_button.clicked.connect(lambda: self._step(-1))
        self.next_button.clicked.connect(lambda: self._step(+1))
        self.versions.hide()
        self.version = (1, 1)
        outer.addWidget(self.versions, 0, Qt.AlignmentFlag.AlignBottom)
        outer.addWidget(bubble)
        self.bubble = bubble

    def set_versions(self, active: int, total: int) -> None:
        """Show "‹ active/total ›" (hidden for a question with one version)."""
        self.version = (active, total)
        self.version_label.setText(f"{active}/{total}")
        self.previous_button.setEnabled(active > 1)
        self.next_button.setEnabled(active < total)
        self.versions.setVisible(total > 1)

    def _step(self, delta: int) -> None:
        active, total = self.version
        wanted = active + delta
        if 1 <= wanted <= total:
            self.version_requested.emit(self, wanted)

    def set_editing(self, editing: bool) -> None:
        """Mark this message as the one being edited in the composer."""
        self.bubble.setProperty("editing", editing)
        self.bubble.style().unpolish(self.bubble)
        self.bubble.style().polish(self.bubble)
        self.edit_button.setText("Editing…" if editing else "Edit")
        self.edit_button.setEnabled(not editing)


class ThinkingIndicator(QLabel):
    """An animated "Thinking…" line shown while the tool loop works."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("ThinkingIndicator")
        self._base = "Thinking"
        self._dots = 0
        self._timer = QTimer(self)
        self._timer.setInterval(400)
        self._timer.timeout.connect(self._tick)
        self.hide()

    def start(self, text: str = "Thinking") -> None:
        self._base = text
        self._tick()
        self.show()
        self._timer.start()

    def stop(self) -> None:
        self._timer.stop()
        self.hide()

    @property
    def active(self) -> bool:
        return self._timer.isActive()

    def _tick(self) -> None:
        self._dots = (self._dots + 1) % 4
        self.setText(f"{self._base}{'.' * self._dots}")


class ErrorCard(QFrame):
    """What went wrong and what to do, where it happened."""

    def __init__(self, message: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("ErrorCard")
        self.message = message
        layout = QHBoxLayout(self)
        layout.setContentsMargins(10, 6, 10, 6)
        label = WrappingText(f"⚠  {message}")
        layout.addWidget(label)


class InterruptNote(QFrame):
    """A message the user sent while the run was working (an interrupt)."""

    def __init__(self, text: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("InterruptNote")
        self.text = text
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 4, 8, 4)
        self.status = QLabel("You interrupted · waiting for the agent")
        self.status.setObjectName("Muted")
        body = WrappingText(text)
        layout.addWidget(self.status)
        layout.addWidget(body)
        self.delivered = False

    def mark_delivered(self) -> None:
        self.delivered = True
        self.status.setText("You interrupted · the agent received this")


class Divider(QLabel):
    """A centred muted line, e.g. "context summarised"."""

    def __init__(self, text: str, parent: QWidget | None = None) -> None:
        super().__init__(f"──────  {text}  ──────", parent)
        self.setObjectName("Divider")
        self.setTextFormat(Qt.TextFormat.PlainText)
        self.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.setWordWrap(True)  # a check's reason can be a long line
        # ...and never widens the chat: a run without spaces is cut at the edge (the whole
        # line is the tooltip) instead of pushing everything past the window's edge.
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.setToolTip(text)


class AssistantTurn(QFrame):
    """The assistant's side of one exchange, built from run events."""

    regenerate_requested = Signal(object)  # self
    #: A citation in the answer was clicked: the ``CitedPassage``.
    citation_opened = Signal(object)
    ledger_requested = Signal(object)  # self: open what this answer sent
    read_aloud_requested = Signal(object)  # self

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("AssistantTurn")
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Minimum)
        self._layout = QVBoxLayout(self)
        self._layout.setContentsMargins(0, 4, 40, 4)
        self._layout.setSpacing(6)
        self.cards: list[ToolCard] = []
        self.interrupts: list[InterruptNote] = []
        self.errors: list[ErrorCard] = []
        self.dividers: list[Divider] = []
        self.plans: list[QWidget] = []  # DAG plan cards
        self.answer = MarkdownView(parent=self)
        self.thinking = ThinkingIndicator(self)
        self.footer = QLabel(self)
        self.footer.setObjectName("Footer")
        self.footer.setWordWrap(True)
        self.footer.hide()
        # "Sent to api.example.com · 3.2 kB" when this answer's requests left the computer
        # (the privacy ledger); a click opens exactly what was sent.
        self.sent = QLabel(self)
        self.sent.setObjectName("SentLine")
        self.sent.setTextFormat(Qt.TextFormat.RichText)
        self.sent.linkActivated.connect(lambda _link: self.ledger_requested.emit(self))
        self.sent.hide()
        self.action_row = QWidget(self)
        row = QHBoxLayout(self.action_row)
        row.setContentsMargins(0, 0, 0, 0)
        self.copy_button = QToolButton(self.action_row)
        self.copy_button.setText("Copy")
        self.copy_button.setToolTip("Copy the answer as Markdown")
        self.copy_button.clicked.connect(self._copy)
        self.regenerate_button = QToolButton(self.action_row)
        self.regenerate_button.setText("Regenerate")
        self.regenerate_button.setToolTip("Ask again for a new answer")
        self.regenerate_button.clicked.connect(lambda: self.regenerate_requested.emit(self))
        self.read_button = QToolButton(self.action_row)
        self.read_button.setText("Read aloud")
        self.read_button.setToolTip("Read this answer aloud (offline voice)")
        self.read_button.clicked.connect(lambda: self.read_aloud_requested.emit(self))
        row.addWidget(self.copy_button)
        row.addWidget(self.regenerate_button)
        row.addWidget(self.read_button)
        row.addStretch(1)
        self.action_row.hide()
        # Fixed order: events insert above the thinking indicator, the answer below them.
        self._layout.addWidget(self.thinking)
        self._layout.addWidget(self.answer)
        self._layout.addWidget(self.footer)
        self._layout.addWidget(self.sent)
        self._layout.addWidget(self.action_row)
        self.message_id: int | None = None
        self.user_message_id: int | None = None
        self.answer.citation_clicked.connect(self._open_citation)

    def insert_widget(self, widget: QWidget) -> None:
        """Add a widget to the run's trace (above the thinking indicator and the answer)."""
        self._layout.insertWidget(self._layout.indexOf(self.thinking), widget)

    # --- event handlers ----------------------------------------------------------------------
    def start_thinking(self, iteration: int) -> None:
        self.thinking.start("Thinking" if iteration <= 1 else f"Thinking (step {iteration})")

    def add_card(self, tool_name: str, args: object, iteration: int,
                 call_id: str | None = None) -> ToolCard:
        card = ToolCard(tool_name, args, iteration, call_id=call_id, parent=self)
        self.cards.append(card)
        self.insert_widget(card)
        self.thinking.start(f"Running {tool_name}")
        return card

    def find_card(self, tool_name: str, iteration: int, call_id: str | None) -> ToolCard | None:
        for card in reversed(self.cards):
            if card.status != "running":
                continue
            if call_id is not None and card.call_id == call_id:
                return card
            if call_id is None and card.tool_name == tool_name and card.iteration == iteration:
                return card
        return None

    def add_interrupt(self, text: str) -> InterruptNote:
        note = InterruptNote(text, self)
        self.interrupts.append(note)
        self.insert_widget(note)
        return note

    def mark_interrupt_delivered(self, text: str) -> None:
        for note in self.interrupts:
            if not note.delivered and note.text.strip() in text:
                note.mark_delivered()

    def add_divider(self, text: str) -> Divider:
        divider = Divider(text, self)
        self.dividers.append(divider)
        self.insert_widget(divider)
        return divider

    def add_error(self, message: str) -> ErrorCard:
        card = ErrorCard(message, self)
        self.errors.append(card)
        self._layout.insertWidget(self._layout.indexOf(self.footer), card)
        return card

    def begin_answer(self) -> None:
        self.thinking.stop()
        self.answer.start_stream()

    def append_answer(self, delta: str) -> None:
        if self.thinking.active:
            self.thinking.stop()
        self.answer.append(delta)

    def end_answer(self) -> None:
        if self.answer.streaming:
            self.answer.finish_stream()

    def finish(self, footer: str, answer: str) -> None:
        """The run is over: show the footer; use ``answer`` if nothing was streamed."""
        self.thinking.stop()
        self.end_answer()
        if not self.answer.text().strip() and answer.strip():
            self.answer.set_markdown(answer)
        self.answer.set_citations(self.citations())
        self.footer.setText(footer)
        self.footer.show()
        self.action_row.show()

    def set_sent(self, summary: str) -> None:
        from html import escape

        self.sent.setText(f'{escape(summary)} · <a href="ledger">see what was sent</a>')
        self.sent.setToolTip("From the privacy ledger: every request this answer sent")
        self.sent.show()

    def citations(self) -> dict[int, object]:
        """Passages this run's document searches gave the model, by number."""
        from desktop_app.core.documents.citations import parse_passages

        return dict(parse_passages(card.observation for card in self.cards
                                   if card.tool_name == "search_documents" and card.observation))

    def _open_citation(self, number: int) -> None:
        passage = self.answer.citations.get(number)
        if passage is not None:
            self.citation_opened.emit(passage)

    def answer_text(self) -> str:
        return self.answer.text()

    def _copy(self) -> None:
        from PySide6.QtGui import QGuiApplication

        QGuiApplication.clipboard().setText(self.answer.text())
