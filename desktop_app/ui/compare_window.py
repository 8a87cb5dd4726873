"""The Compare window (SPEC §9): one prompt, several models side by side.

The user types a prompt, ticks two or more models from the registry and presses Run; each
model gets a :class:`~desktop_app.ui.compare_column.CompareColumn` with its answer streaming
live and its numbers (time to first token, tokens/s, total time, tokens, tool calls).

The measuring is the core's :func:`~desktop_app.core.compare.compare_models` (the same as
``desktop-app compare``): local models one after another, hosted ones concurrently. It runs
as one asyncio task on the qasync loop; llama.cpp works on its adapter's worker thread, so
the window stays responsive. A model that fails shows the error in its own column while
the others go on; Stop cancels them all.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QCloseEvent, QKeySequence, QShortcut, QShowEvent
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPlainTextEdit,
    QPushButton,
    QScrollArea,
    QSplitter,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from desktop_app.core.catalogue.fit import size_text
from desktop_app.core.tools.base import Change
from desktop_app.ui import theme
from desktop_app.ui.app_context import AppContext
from desktop_app.ui.compare_column import CompareColumn
from desktop_app.ui.compare_eval import EvalPanel
from desktop_app.ui.model_picker import _KIND_LABELS, abilities_text, describe

if TYPE_CHECKING:
    from desktop_app.core.agent.events import Event
    from desktop_app.core.agent.react import ReActAgent
    from desktop_app.core.llm.base import LLM

#: Loads a model by name (and the names to keep loaded beside it) off the Qt thread (the
#: main window passes its controller's loader, which shows progress and imports adapters
#: safely).
ModelLoader = Callable[..., Awaitable["LLM"]]

_LOCAL_KINDS = ("bundled", "local")


def _stylesheet() -> str:
    p = theme.active()
    return f"""
#CompareColumn {{ background: {p.surface}; border: 1px solid {p.border}; border-radius: 8px; }}
#CompareColumn[status="error"] {{ border-color: {p.error_text}; }}
#CompareColumnHeader {{ background: transparent; border: none; }}
#CompareTitle {{ font-weight: 600; font-size: 11pt; }}
#CompareMetrics {{ background: {p.surface_alt}; border: none;
                   border-top: 1px solid {p.border}; border-bottom: 1px solid {p.border}; }}
#CompareValue {{ font-weight: 600; }}
#CompareScroll, #CompareBody {{ background: {p.surface}; border: none;
                                border-bottom-left-radius: 8px; border-bottom-right-radius: 8px; }}
#CompareColumns {{ background: {p.window}; }}
QPushButton#Danger:disabled {{ background: transparent; color: {p.text_muted};
                              border: 1px solid {p.border}; }}
"""


class CompareWindow(QWidget):
    """One prompt, the ticked models, one live column per model."""

    #: Emitted when a comparison ends (done, failed or stopped).
    run_finished = Signal()

    def __init__(self, ctx: AppContext, load_llm: ModelLoader | None = None,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent, Qt.WindowType.Window)
        self.ctx = ctx
        self.setWindowTitle("Compare models")
        self.setObjectName("CompareWindow")
        self.resize(1180, 780)
        self._load_llm = load_llm
        #: Extra ReActAgent options (tests: small max_iterations; benchmarks: max_tokens).
        self.agent_options: dict[str, Any] = {}
        self.columns: dict[str, CompareColumn] = {}
        #: Model name → its measured speed here (``core/catalogue/speeds.py``).
        self.speeds: dict[str, str] = {}
        self.task: asyncio.Task[None] | None = None

        self.prompt = QPlainTextEdit()
        self.prompt.setObjectName("ComposerInput")
        self.prompt.setPlaceholderText("One prompt for every ticked model… (Ctrl+Enter runs)")
        self.prompt.textChanged.connect(self._update_buttons)
        self.models = QListWidget()
        # Long names wrap inside the list instead of widening it (the tooltip says it all).
        self.models.setWordWrap(True)
        self.models.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.models.setToolTip("Tick two or more models to compare")
        self.models.itemChanged.connect(lambda _item: self._update_buttons())
        self.hint = QLabel()
        self.hint.setObjectName("Muted")
        self.hint.setWordWrap(True)
        self.run_button = QPushButton("Run")
        self.run_button.setObjectName("Primary")
        self.run_button.setToolTip("Run the prompt on every ticked model (Ctrl+Enter)")
        self.run_button.clicked.connect(self.run)
        self.stop_button = QPushButton("Stop")
        self.stop_button.setObjectName("Danger")
        self.stop_button.setToolTip("Stop every model (Esc); what was written so far stays")
        self.stop_button.clicked.connect(self.stop)
        self.eval_button = QPushButton("Evaluate")
        self.eval_button.setToolTip("Run the built-in evaluation suite (or one category) on the "
                                    "ticked models and compare their scores")
        self.eval_button.clicked.connect(self.evaluate)

        prompt_box = QWidget()
        left = QVBoxLayout(prompt_box)
        left.setContentsMargins(0, 0, 0, 0)
        left.addWidget(QLabel("Prompt"))
        left.addWidget(self.prompt, 1)
        models_box = QWidget()
        right = QVBoxLayout(models_box)
        right.setContentsMargins(0, 0, 0, 0)
        right.addWidget(QLabel("Models (local run one after another, hosted at once)"))
        right.addWidget(self.models, 1)
        inputs = QSplitter(Qt.Orientation.Horizontal)
        inputs.addWidget(prompt_box)
        inputs.addWidget(models_box)
        inputs.setSizes([640, 460])
        buttons = QHBoxLayout()
        buttons.addWidget(self.hint, 1)
        buttons.addWidget(self.stop_button)
        buttons.addWidget(self.eval_button)
        buttons.addWidget(self.run_button)
        top = QWidget()
        top_layout = QVBoxLayout(top)
        top_layout.setContentsMargins(12, 12, 12, 6)
        top_layout.addWidget(inputs, 1)
        top_layout.addLayout(buttons)

        self.columns_host = QWidget()
        self.columns_host.setObjectName("CompareColumns")
        self.columns_layout = QHBoxLayout(self.columns_host)
        self.columns_layout.setContentsMargins(12, 6, 12, 12)
        self.columns_layout.setSpacing(10)
        self.placeholder = QLabel("Each model's answer and numbers appear here, side by side.")
        self.placeholder.setObjectName("Muted")
        self.placeholder.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.columns_layout.addWidget(self.placeholder)
        # Many models: the columns keep a readable width and the row scrolls sideways.
        self.results = QScrollArea()
        self.results.setWidgetResizable(True)
        self.results.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.results.setWidget(self.columns_host)
        self.results.setObjectName("CompareColumns")
        splitter = QSplitter(Qt.Orientation.Vertical)
        splitter.addWidget(top)
        self.eval_panel = EvalPanel(ctx.store)
        self.tabs = QTabWidget()
        self.tabs.addTab(self.results, "Answers")
        self.tabs.addTab(self.eval_panel, "Evaluation")
        splitter.addWidget(self.tabs)
        splitter.setStretchFactor(1, 1)
        splitter.setSizes([230, 550])
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(splitter)

        QShortcut(QKeySequence("Ctrl+Return"), self).activated.connect(self.run)
        QShortcut(QKeySequence("Ctrl+Enter"), self).activated.connect(self.run)
        QShortcut(QKeySequence(Qt.Key.Key_Escape), self).activated.connect(self.stop)
        QShortcut(QKeySequence("Ctrl+W"), self).activated.connect(self.close)
        self.set_registry()

    # --- models ------------------------------------------------------------------------------------
    def set_registry(self) -> None:
        """List the context's models (nothing is loaded), keeping ticks where names remain."""
        ticked = set(self.selected_names())
        self.models.blockSignals(True)
        self.models.clear()
        for entry in self.ctx.registry.entries():
            kind = _KIND_LABELS.get(entry.kind, entry.kind)
            speed = self.speeds.get(entry.name)
            short = f"\n{speed.removeprefix('measured here: ')}" if speed else ""
            item = QListWidgetItem(f"{entry.name}  —  {kind}\n{abilities_text(entry)}{short}")
            item.setData(Qt.ItemDataRole.UserRole, entry.name)
            item.setToolTip(describe(entry, speed))
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            item.setCheckState(Qt.CheckState.Checked if entry.name in ticked
                               else Qt.CheckState.Unchecked)
            self.models.addItem(item)
        self.models.blockSignals(False)
        self._update_buttons()

    def set_checked(self, names: list[str] | tuple[str, ...]) -> None:
        """Tick exactly ``names`` (tests, and remembering the last comparison)."""
        for i in range(self.models.count()):
            item = self.models.item(i)
            wanted = item.data(Qt.ItemDataRole.UserRole) in names
            item.setCheckState(Qt.CheckState.Checked if wanted else Qt.CheckState.Unchecked)

    def selected_names(self) -> list[str]:
        return [self.models.item(i).data(Qt.ItemDataRole.UserRole)
                for i in range(self.models.count())
                if self.models.item(i).checkState() == Qt.CheckState.Checked]

    # --- state -------------------------------------------------------------------------------------
    @property
    def running(self) -> bool:
        return self.task is not None and not self.task.done()

    def _update_buttons(self) -> None:
        count = len(self.selected_names())
        has_prompt = bool(self.prompt.toPlainText().strip())
        if self.running:
            hint = "Comparing… Stop (Esc) ends every model; what was written so far stays."
        elif len(self.ctx.registry) < 2:
            hint = "Compare needs at least two models: add a local GGUF or a hosted API in Settings."
        elif count < 2:
            hint = f"Tick at least two models to compare ({count} ticked)."
        elif not has_prompt:
            hint = "Type the prompt every model will answer."
        else:
            hint = f"Ready: {count} models. Tools that change things are not run in a comparison."
        self.hint.setText(hint)
        self.run_button.setEnabled(not self.running and count >= 2 and has_prompt)
        self.eval_button.setEnabled(not self.running and count >= 1)
        self.stop_button.setEnabled(self.running)
        self.models.setEnabled(not self.running)
        self.prompt.setReadOnly(self.running)

    # --- running -----------------------------------------------------------------------------------
    def run(self) -> asyncio.Task[None] | None:
        """Start comparing the ticked models on the prompt; returns the task (None: not ready)."""
        names = self.selected_names()
        prompt = self.prompt.toPlainText().strip()
        if self.running or len(names) < 2 or not prompt:
            return None
        self._build_columns(names)
        self.tabs.setCurrentWidget(self.results)
        self.task = asyncio.ensure_future(self._run(prompt, names))
        self._update_buttons()
        return self.task

    def evaluate(self) -> asyncio.Task[None] | None:
        """Run the evaluation tab's tasks on the ticked models (one is enough)."""
        names = self.selected_names()
        if self.running or not names:
            return None
        if self.tabs.currentWidget() is not self.eval_panel:
            # First the choice and what it costs (the whole suite on several local models
            # is an hour): the next press runs it.
            self.tabs.setCurrentWidget(self.eval_panel)
            self.eval_panel.show_estimate(len(names))
            return None
        self.task = asyncio.ensure_future(self._evaluate(names))
        self._update_buttons()
        return self.task

    async def _evaluate(self, names: list[str]) -> None:
        try:
            await self.eval_panel.evaluate(names, self._load)
        finally:
            self.task_finished()

    def stop(self) -> None:
        """Cancel every model's run; columns keep what they showed."""
        if self.task is not None and not self.task.done():
            self.task.cancel()

    async def wait_idle(self) -> None:
        """Wait until no comparison is running."""
        task = self.task
        if task is not None:
            try:
                await asyncio.shield(task)
            except asyncio.CancelledError:
                pass

    def _build_columns(self, names: list[str]) -> None:
        for column in self.columns.values():
            column.setParent(None)
            column.deleteLater()
        self.columns.clear()
        self.placeholder.hide()
        for name in names:
            entry = self.ctx.registry.entry(name)
            column = CompareColumn(name, _KIND_LABELS.get(entry.kind, entry.kind),
                                   describe(entry), self.columns_host)
            self.columns[name] = column
            self.columns_layout.addWidget(column, 1)

    async def _load(self, name: str, together: frozenset[str] = frozenset()) -> LLM:
        if self._load_llm is not None:
            return await self._load_llm(name, together)  # the others stay loaded
        return await asyncio.to_thread(self.ctx.registry.get, name)  # may read the keyring

    def _make_agent(self, llm: LLM) -> ReActAgent:
        from desktop_app.core.agent.factory import make_agent

        async def deny(tool_name: str, tool_args: dict[str, Any], change: Change | None) -> bool:
            # Nobody answers permission questions in a comparison: changing tools never run
            # (the same rule as `desktop-app compare`).
            return False

        # Nor is anyone asked before files or notes go to a model on another computer:
        # make_agent keeps them local (a hosted model answers without them).
        return make_agent(llm, self.ctx.tools(), confirm=deny, **self.agent_options)

    def _on_event(self, name: str, event: Event) -> None:
        column = self.columns.get(name)
        if column is not None:
            column.on_event(event)

    async def _run(self, prompt: str, names: list[str]) -> None:
        from desktop_app.core.agent.runner import error_message
        from desktop_app.core.compare import CompareTarget, compare_models

        try:
            local = [n for n in names if self.ctx.registry.entry(n).kind in _LOCAL_KINDS]
            short = await asyncio.to_thread(self.ctx.residency.shortfall, local)
            if short is not None:  # said before anything loads (it would not fit)
                for name in local:
                    self.columns[name].fail(
                        f"Not enough memory for these local models together: they need "
                        f"about {size_text(short[0])}, about {size_text(short[1])} can be "
                        "free. Untick one of them and run again.")
                names = [n for n in names if n not in local]
            targets = []
            for name in names:  # a model that cannot load fails in its column only
                column = self.columns[name]
                column.set_status("loading")
                try:
                    llm = await self._load(name, frozenset(names))
                except Exception as exc:  # noqa: BLE001 - shown where it happened
                    column.fail(error_message(exc))
                    continue
                column.set_status("waiting")
                local = self.ctx.registry.entry(name).kind in _LOCAL_KINDS
                targets.append(CompareTarget(name=name, llm=llm, local=local))
            if targets:
                rows = await compare_models(prompt, targets, self._make_agent,
                                            on_event=self._on_event)
                for row in rows:
                    self.columns[row.name].show_row(row)
        except asyncio.CancelledError:
            for column in self.columns.values():
                column.stop()
            raise
        except Exception as exc:  # noqa: BLE001 - e.g. the tools could not be built
            for column in self.columns.values():
                if not column.finished:
                    column.fail(error_message(exc))
        finally:
            self.task_finished()

    def task_finished(self) -> None:
        # Called from the task's own finally: it is not done yet, so ``running`` is cleared
        # by hand before the buttons are updated.
        self.task = None
        self._update_buttons()
        self.run_finished.emit()

    def showEvent(self, event: QShowEvent) -> None:
        # The theme may have changed (Settings, system dark mode) since the window was made.
        self.setStyleSheet(_stylesheet())
        super().showEvent(event)

    def closeEvent(self, event: QCloseEvent) -> None:
        self.stop()
        super().closeEvent(event)
