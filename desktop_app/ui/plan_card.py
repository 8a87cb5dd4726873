"""The DAG plan of a DAG-mode run: each step with its status, model and result.

Built from a ``DagPlan`` event and updated live by ``DagStepStart`` / ``DagStepDone``; a
re-plan (``DagPlan`` of a later round) adds a new card under the old one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFrame, QGridLayout, QLabel, QToolButton, QVBoxLayout, QWidget

from desktop_app.ui.text_wrap import WrappingText

if TYPE_CHECKING:
    from desktop_app.core.dag.events import DagPlan, DagStepDone, DagStepStart

#: Characters of a step's output shown when it is opened (the analyzer and answer get all).
OUTPUT_CHARS = 4_000

_MARKS = {"pending": "○", "running": "◐", "done": "✓", "failed": "✗", "skipped": "⤼",
          "cancelled": "■"}


class PlanCard(QFrame):
    """A table of plan steps: status, id, task, dependencies, model."""

    def __init__(self, plan: DagPlan, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("ToolCard")
        self.round = plan.round
        self.status: dict[str, str] = {}
        self._status_labels: dict[str, QLabel] = {}
        self._model_labels: dict[str, QLabel] = {}
        layout = QVBoxLayout(self)
        layout.setContentsMargins(10, 6, 10, 8)
        title = "Plan" if plan.round == 0 else f"Revised plan (round {plan.round + 1})"
        if plan.fallback:
            title += " · single-step fallback"
        header = QLabel(f"<b>{title}</b> · {len(plan.steps)} steps")
        layout.addWidget(header)
        if plan.fallback and plan.warnings:
            # Why there is no real plan is the user's business; show it.
            note = WrappingText(f"⚠ {plan.warnings[0]}")
            note.setObjectName("Muted")
            layout.addWidget(note)
        elif plan.warnings:
            # How the model's plan was repaired is for the curious: a tooltip, not a banner.
            header.setText(f"{header.text()} · <span style='font-weight:normal'>repaired"
                           "</span>")
            header.setToolTip("The model's plan was repaired:\n" + "\n".join(plan.warnings))
        grid = QGridLayout()
        grid.setHorizontalSpacing(10)
        grid.setVerticalSpacing(3)
        self._outputs: dict[str, WrappingText] = {}
        self._toggles: dict[str, QToolButton] = {}
        for index, step in enumerate(plan.steps):
            row = index * 2  # the step, then its output (hidden until opened)
            status = QLabel(_MARKS["pending"])
            status.setToolTip("pending")
            ident = QToolButton()
            ident.setText(f"▸ {step.id}")
            ident.setAutoRaise(True)
            ident.setEnabled(False)  # until the step has an output to show
            ident.setToolTip("Show what this step produced")
            ident.clicked.connect(lambda _=False, sid=step.id: self.toggle_output(sid))
            output = WrappingText()
            output.setObjectName("Muted")
            output.hide()
            grid.addWidget(output, row + 1, 2, 1, 2)
            self._outputs[step.id] = output
            self._toggles[step.id] = ident
            deps = f"  (after {', '.join(step.dependencies)})" if step.dependencies else ""
            task = WrappingText(f"{step.task}{deps}")
            model = QLabel(step.model or step.model_hint or "default model")
            model.setObjectName("Muted")
            grid.addWidget(status, row, 0, Qt.AlignmentFlag.AlignTop)
            grid.addWidget(ident, row, 1, Qt.AlignmentFlag.AlignTop)
            grid.addWidget(task, row, 2)
            grid.addWidget(model, row, 3, Qt.AlignmentFlag.AlignTop)
            self.status[step.id] = "pending"
            self._status_labels[step.id] = status
            self._model_labels[step.id] = model
        grid.setColumnStretch(2, 1)
        layout.addLayout(grid)

    def _set(self, step_id: str, status: str, tooltip: str = "") -> None:
        if step_id not in self.status:
            return
        self.status[step_id] = status
        label = self._status_labels[step_id]
        label.setText(_MARKS.get(status, "?"))
        label.setToolTip(tooltip or status)

    def step_started(self, event: DagStepStart) -> None:
        self._set(event.step_id, "running")
        if event.model:
            self._model_labels[event.step_id].setText(event.model)

    def toggle_output(self, step_id: str) -> None:
        """Show or hide what a finished step produced (its result, or why it failed)."""
        output = self._outputs.get(step_id)
        if output is None or not output.text():
            return
        output.setVisible(output.isHidden())
        self._toggles[step_id].setText(f"{'▾' if output.isVisible() else '▸'} {step_id}")

    def step_done(self, event: DagStepDone) -> None:
        text = event.error or event.result
        if event.step_id in self._outputs and text:
            self._outputs[event.step_id].setText(text if len(text) <= OUTPUT_CHARS
                                                 else text[:OUTPUT_CHARS] + "…")
            self._toggles[event.step_id].setEnabled(True)
        detail = event.error or event.result[:400]
        self._set(event.step_id, event.outcome, f"{event.outcome} in {event.elapsed:.1f} s\n{detail}")
        if event.model and event.step_id in self._model_labels:
            self._model_labels[event.step_id].setText(f"{event.model} · {event.elapsed:.1f} s")
