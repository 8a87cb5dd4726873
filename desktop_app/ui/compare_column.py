"""One model's column in the Compare window: its name, a metrics strip, and its answer.

The answer area is the chat view's own :class:`AssistantTurn` fed by ``run_render.apply_event``,
so a compared answer looks exactly like a chat answer (Markdown, code blocks, tool cards,
error cards with what to do). The metrics strip is measured live from the events and then
replaced by the core's :class:`~desktop_app.core.compare.CompareRow` when the run ends.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Literal

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import (
    QFrame,
    QGridLayout,
    QLabel,
    QScrollArea,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from desktop_app.core.llm.types import RunMetrics, Usage
from desktop_app.ui.message_widgets import AssistantTurn
from desktop_app.ui.model_picker import ElidedLabel
from desktop_app.ui.run_render import apply_event

if TYPE_CHECKING:
    from desktop_app.core.agent.events import Event
    from desktop_app.core.compare import CompareRow

Status = Literal["waiting", "loading", "running", "done", "error", "stopped"]

# Short: the strip is narrow; what went wrong is spelled out in the column below it.
_STATUS_TEXT = {"waiting": "waiting", "loading": "loading…", "running": "running…",
                "done": "done ✓", "error": "failed ⚠", "stopped": "stopped"}
_STATUS_TIPS = {"waiting": "Local models run one after another: this one waits for its turn.",
                "loading": "The model is being loaded.", "running": "The model is working.",
                "done": "The model answered.", "error": "What went wrong is shown below.",
                "stopped": "Stopped with the Stop button; what was written so far stays."}

#: The metrics strip, in display order: key → label.
METRICS = (("ttft", "First token"), ("tps", "Output tok/s"), ("prompt_tps", "Prompt tok/s"),
           ("total", "Total time"), ("tokens", "Tokens in/out"), ("tools", "Tool calls"),
           ("status", "Status"))


class MetricsStrip(QFrame):
    """Label/value pairs in two rows of four; values update as the run goes."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("CompareMetrics")
        grid = QGridLayout(self)
        grid.setContentsMargins(8, 6, 8, 6)
        grid.setHorizontalSpacing(12)
        grid.setVerticalSpacing(0)
        self.values: dict[str, ElidedLabel] = {}
        for index, (key, label) in enumerate(METRICS):
            row, col = divmod(index, 4)
            caption = QLabel(label)
            caption.setObjectName("Muted")
            # Elided, not clipped, when a column is narrow; the tooltip has the full value.
            value = ElidedLabel(self)
            value.setObjectName("CompareValue")
            value.set_full_text("–")
            grid.addWidget(caption, row * 2, col)
            grid.addWidget(value, row * 2 + 1, col)
            self.values[key] = value
        for col in range(4):
            grid.setColumnStretch(col, 1)

    def set(self, key: str, text: str, tooltip: str = "") -> None:
        self.values[key].set_full_text(text)
        self.values[key].setToolTip(tooltip or text)

    def text(self, key: str) -> str:
        """The full value (what is shown may end in "…")."""
        return self.values[key].full_text()


class CompareColumn(QFrame):
    """What one model does with the prompt, shown live."""

    def __init__(self, name: str, kind_label: str, tooltip: str = "",
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("CompareColumn")
        self.name = name
        self.setMinimumWidth(300)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        header = QFrame(self)
        header.setObjectName("CompareColumnHeader")
        head = QVBoxLayout(header)
        head.setContentsMargins(10, 8, 10, 6)
        head.setSpacing(0)
        # Long model names (hub paths, file names) end in "…"; the tooltip has the full name.
        self.title = ElidedLabel(header)
        self.title.setObjectName("CompareTitle")
        self.title.set_full_text(name)
        self.title.setToolTip(tooltip or name)
        self.kind = QLabel(kind_label, header)
        self.kind.setObjectName("Muted")
        head.addWidget(self.title)
        head.addWidget(self.kind)
        self.metrics = MetricsStrip(self)
        self.turn = AssistantTurn()
        self.turn.regenerate_button.hide()  # a comparison is re-run as a whole, with Run
        # The chat's right margin (room beside the bubbles) only wastes a narrow column.
        turn_layout = self.turn.layout()
        if turn_layout is not None:
            turn_layout.setContentsMargins(0, 4, 0, 4)
        self.answer_scroll = QScrollArea(self)
        self.answer_scroll.setObjectName("CompareScroll")
        self.answer_scroll.setWidgetResizable(True)
        self.answer_scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        body = QWidget()
        body.setObjectName("CompareBody")
        column = QVBoxLayout(body)
        column.setContentsMargins(10, 6, 10, 6)
        column.addWidget(self.turn)
        column.addStretch(1)
        self.answer_scroll.setWidget(body)
        # Follow a streaming answer down, unless the user scrolled up to read.
        self._follow = True
        bar = self.answer_scroll.verticalScrollBar()
        bar.valueChanged.connect(lambda v: setattr(self, "_follow", v >= bar.maximum() - 4))
        bar.rangeChanged.connect(lambda _lo, hi: bar.setValue(hi) if self._follow else None)
        layout.addWidget(header)
        layout.addWidget(self.metrics)
        layout.addWidget(self.answer_scroll, 1)
        self.status: Status = "waiting"
        self.tool_calls = 0
        self.ttft: float | None = None
        self._started: float | None = None
        self._clock = QTimer(self)
        self._clock.setInterval(100)
        self._clock.timeout.connect(self._tick)
        self.set_status("waiting")

    # --- state -----------------------------------------------------------------------------------
    def set_status(self, status: Status, detail: str = "") -> None:
        self.status = status
        self.metrics.set("status", detail or _STATUS_TEXT[status], _STATUS_TIPS[status])
        self.setProperty("status", status)
        # A dynamic property only restyles (the red border of a failed column) on re-polish.
        self.style().unpolish(self)
        self.style().polish(self)

    @property
    def finished(self) -> bool:
        return self.status in ("done", "error", "stopped")

    def fail(self, message: str) -> None:
        """The model could not even start (e.g. it failed to load): say why, in this column."""
        self._clock.stop()
        self.turn.thinking.stop()
        self.turn.add_error(message)
        self.set_status("error")

    def stop(self) -> None:
        """The user pressed Stop: a column still working or waiting ends as "stopped"."""
        if self.finished:
            return
        self._clock.stop()
        self.turn.thinking.stop()
        self.turn.end_answer()
        self.set_status("stopped", "stopped" if self._started else "not started")

    # --- events ----------------------------------------------------------------------------------
    def on_event(self, event: Event) -> None:
        """Show one of this model's run events (called on the Qt thread, in order)."""
        from desktop_app.core.agent.events import AnswerDelta, Done, IterationStart

        if self._started is None:
            self._started = time.perf_counter()
            self._clock.start()
            self.set_status("running")
        if isinstance(event, AnswerDelta) and event.content and self.ttft is None:
            self.ttft = time.perf_counter() - self._started
            self.metrics.set("ttft", f"{self.ttft:.2f} s")
        elif isinstance(event, IterationStart):
            self.tool_calls += 1
            self.metrics.set("tools", str(self.tool_calls))
        apply_event(self.turn, event)
        if isinstance(event, Done):
            self.turn.footer.hide()  # the metrics strip above says it all
            self.turn.action_row.setVisible(bool(self.answer_text().strip()))  # Copy what?
            self._show_done(event.elapsed, event.usage, event.metrics)
            if event.cancelled:
                self._clock.stop()
                self.set_status("stopped")
            elif event.error:
                self._clock.stop()
                self.set_status("error")
            else:
                self._clock.stop()
                self.set_status("done")

    def show_row(self, row: CompareRow) -> None:
        """The core's final measurement (same clock as the CLI's table) replaces the live one."""
        self.ttft = row.ttft
        self.metrics.set("ttft", f"{row.ttft:.2f} s" if row.ttft is not None else "–")
        self.tool_calls = row.tool_calls
        self.metrics.set("tools", str(row.tool_calls))
        self._show_done(row.elapsed, row.usage, row.metrics)
        if row.error and self.status != "error":
            self.fail(row.error)

    def _show_done(self, elapsed: float, usage: Usage, metrics: RunMetrics | None) -> None:
        self.metrics.set("total", f"{elapsed:.2f} s")
        self.metrics.set("tokens", f"{usage.prompt_tokens:,} / {usage.completion_tokens:,}")
        # The model's own speeds (per call), not tokens over the run's whole time.
        tps = metrics.output_tps if metrics else None
        prompt_tps = metrics.prompt_tps if metrics else None
        self.metrics.set("tps", f"{tps:.1f}" if tps is not None else "–")
        self.metrics.set("prompt_tps", f"{prompt_tps:,.0f}" if prompt_tps is not None else "–")
        self.metrics.set("tools", str(self.tool_calls))

    def _tick(self) -> None:
        if self._started is not None:
            self.metrics.set("total", f"{time.perf_counter() - self._started:.1f} s…")

    def answer_text(self) -> str:
        return self.turn.answer_text()

    def error_texts(self) -> list[str]:
        return [card.message for card in self.turn.errors]
