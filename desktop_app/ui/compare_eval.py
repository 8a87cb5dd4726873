"""The Compare window's evaluation tab: the built-in suite (or one category) on the ticked
models, one scoreboard column per model, saved to the store like ``desktop-app eval``."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from desktop_app.core.evals import Summary, load_suite, react_runner, run_suite
from desktop_app.core.evals.runner import TaskResult
from desktop_app.core.evals.suite import EvalSuite
from desktop_app.core.llm.base import LLM
from desktop_app.core.store.async_store import AsyncStore

ModelLoader = Callable[[str], Awaitable[LLM]]
_TOTAL_ROWS = ("tool tasks", "no-tool questions", "near-misses", "other languages", "all",
               "mean s / task")


#: The bundled model's mean time per task on a 2-core laptop (README, evaluation table).
SECONDS_PER_TASK = 10.4


class EvalPanel(QWidget):
    """Pick the suite or a category; ``evaluate(names, load)`` fills the scoreboard."""

    finished = Signal()

    def __init__(self, store: AsyncStore | None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.store = store
        self.suite: EvalSuite = load_suite()
        self.split = QComboBox()
        for label, value in (("dev split (tuned on)", "dev"),
                             ("held-out split (never tuned on)", "heldout"),
                             ("both splits, side by side", None)):
            count = sum(1 for t in self.suite.tasks if value is None or t.split == value)
            self.split.addItem(f"{label}, {count} tasks", value)
        self.category = QComboBox()
        self.category.addItem("every category", None)
        for name in self.suite.categories():
            count = sum(1 for t in self.suite.tasks if t.category == name)
            self.category.addItem(f"{name.replace('_', ' ')} ({count})", name)
        self.progress = QLabel("Tick models above, choose what to run, press Evaluate.")
        self.progress.setObjectName("Muted")
        self.table = QTableWidget(0, 0)
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        row = QHBoxLayout()
        row.addWidget(QLabel("Run"))
        row.addWidget(self.split)
        row.addWidget(self.category)
        row.addWidget(self.progress, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(12, 6, 12, 12)
        layout.addLayout(row)
        layout.addWidget(self.table, 1)

    def show_estimate(self, models: int) -> None:
        """What pressing Evaluate again will run, and about how long it takes."""
        tasks = len(self.selected_suite().tasks)
        minutes = max(1, round(tasks * models * SECONDS_PER_TASK / 60))
        self.progress.setText(
            f"Press Evaluate again to run {tasks} task{'s' if tasks != 1 else ''} on "
            f"{models} model{'s' if models != 1 else ''}: about {minutes} min with a small "
            "local model here. Choose a split or one category for a shorter run.")

    def selected_suite(self) -> EvalSuite:
        return self.suite.select([self.category.currentData()] if self.category.currentData()
                                 else None, split=self.split.currentData())

    def _splits(self, suite: EvalSuite) -> list[str]:
        return list(dict.fromkeys(t.split for t in suite.tasks))

    def _prepare(self, names: list[str], suite: EvalSuite) -> None:
        rows = [*suite.categories(), *_TOTAL_ROWS]
        splits = self._splits(suite)
        labels = [name if len(splits) == 1 else f"{name} · {split}"
                  for name in names for split in splits]
        self.table.clear()
        self.table.setRowCount(len(rows))
        self.table.setColumnCount(len(labels))
        self.table.setVerticalHeaderLabels([r.replace("_", " ") for r in rows])
        self.table.setHorizontalHeaderLabels(labels)
        for column in range(len(labels)):
            for index in range(len(rows)):
                self.table.setItem(index, column, QTableWidgetItem("…"))

    def _show(self, column: int, summary: Summary, suite: EvalSuite) -> None:
        cells = [summary.categories.get(c) for c in suite.categories()]
        totals = [summary.tool_tasks, summary.no_tool, summary.near_miss,
                  summary.non_english, summary.overall]
        for index, score in enumerate([*cells, *totals]):
            text = (f"{score.passed}/{score.total}  ({score.rate:.0%})"
                    if score is not None and score.total else "–")
            item = QTableWidgetItem(text)
            item.setTextAlignment(Qt.AlignmentFlag.AlignCenter)
            self.table.setItem(index, column, item)
        mean = QTableWidgetItem(f"{summary.overall.mean_seconds:.1f} s")
        mean.setTextAlignment(Qt.AlignmentFlag.AlignCenter)
        self.table.setItem(len(cells) + len(totals), column, mean)

    async def evaluate(self, names: list[str], load: ModelLoader) -> list[Summary]:
        """Run the chosen tasks on each model in turn (one CPU for local models)."""
        suite = self.selected_suite()
        self._prepare(names, suite)
        summaries: list[Summary] = []
        try:
            for column, name in enumerate(names):
                self.progress.setText(f"Loading {name}…")
                try:
                    llm = await load(name)
                except Exception as exc:  # noqa: BLE001 - this model fails, the others run
                    self.table.setItem(0, column, QTableWidgetItem(f"could not load: {exc}"))
                    continue
                done: list[TaskResult] = []

                def progress(result: TaskResult, name: str = name,
                             done: list[TaskResult] = done) -> None:
                    done.append(result)
                    passed = sum(r.passed for r in done)
                    self.progress.setText(f"{name}: {len(done)}/{len(suite.tasks)} tasks, "
                                          f"{passed} passed (last: {result.task_id})")

                results = await run_suite(suite, react_runner(llm), on_result=progress)
                summary = Summary.of(name, results)
                summaries.append(summary)
                parts = Summary.by_split(name, results)
                for offset, part in enumerate(parts):
                    self._show(column * len(self._splits(suite)) + offset, part, suite)
                if self.store is not None:
                    await self.store.save_eval_run(model=name, mode="react", suite=suite.name,
                                                   results=results, summary=summary.to_dict(),
                                                   options={"from": "compare"})
            self.progress.setText(f"Done: {len(summaries)} model(s); saved with the "
                                  "evaluation history (desktop-app eval --history).")
        except asyncio.CancelledError:
            self.progress.setText("Stopped; finished models keep their column.")
            raise
        finally:
            self.finished.emit()
        return summaries
