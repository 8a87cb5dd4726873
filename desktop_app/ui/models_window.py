"""The Models window: the models on this computer (with their fit, speed and settings),
recommended models, a Hugging Face search, and models other apps downloaded.

Everything slow runs off the Qt thread: reading GGUF headers and scanning folders in a
thread, hub requests in a thread, downloads on the download bar's worker, benchmarks on a
worker. A change (added, removed, a setting) is saved and announced with
``settings_changed`` so the main window rebuilds its model list.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QComboBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QMessageBox,
    QPushButton,
    QSpinBox,
    QTableWidgetItem,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from desktop_app.core.catalogue import fit, library
from desktop_app.core.catalogue.fit import size_text
from desktop_app.core.config.settings import Settings
from desktop_app.core.errors import DesktopAppError
from desktop_app.ui.models_downloads import DownloadBar
from desktop_app.ui.models_rows import InstalledRow, read_rows, state_text
from desktop_app.ui.models_tabs import ElsewhereTab, RecommendedTab, SearchTab, data_table

ROLES = ("", "general", "fast", "reasoning", "planner", "analyzer")


class ModelsWindow(QWidget):
    """Find, fit, download, add, measure and remove local models."""

    settings_changed = Signal(object)
    #: A model's speed was measured (the picker shows it).
    benchmarked = Signal()

    def __init__(self, ctx: Any, parent: QWidget | None = None, *,
                 running: Callable[[], set[str]] = set,
                 busy: Callable[[], bool] = lambda: False) -> None:
        super().__init__(parent, Qt.WindowType.Window)
        self.ctx = ctx
        #: Names of the models loaded in memory now (the main window's run controller).
        self.running = running
        #: An answer is being written in the main window now.
        self.busy = busy
        self.setWindowTitle("Models")
        self.setObjectName("ModelsWindow")
        self.resize(980, 640)
        self.rows: list[InstalledRow] = []
        self._tasks: set[asyncio.Future[Any]] = set()

        self.summary = QLabel()
        self.summary.setObjectName("Muted")
        #: What the last action did ("Added …", "Removed …; 4.1 GiB freed", an error).
        self.message = QLabel()
        self.message.setWordWrap(True)
        self.tabs = QTabWidget()
        self.installed = data_table(["Model", "State", "Quantisation", "On disk",
                                     "Fit at its context", "Speed here", "File"])
        self.installed.itemSelectionChanged.connect(self._selected)
        self.context = QSpinBox()
        self.context.setRange(512, 1_048_576)
        self.context.setSingleStep(1024)
        self.threads = QSpinBox()
        self.threads.setRange(0, 256)
        self.threads.setSpecialValueText("automatic")
        self.gpu_layers = QSpinBox()
        self.gpu_layers.setRange(0, 1000)
        self.role = QComboBox()
        self.role.addItems([r or "(none)" for r in ROLES])
        self.save_button = QPushButton("Save settings")
        self.save_button.clicked.connect(self._save_selected)
        self.bench_button = QPushButton("Measure speed")
        self.bench_button.setToolTip("Load the model and measure load time, prompt and "
                                     "generation speed and time to first token")
        self.bench_button.clicked.connect(self._bench_clicked)
        self._bench_cancel: threading.Event | None = None
        self.remove_button = QPushButton("Remove…")
        self.remove_button.clicked.connect(self._remove_selected)
        self.detail = QLabel()
        self.detail.setWordWrap(True)
        self.detail.setObjectName("Muted")
        for box in (self.context, self.threads, self.gpu_layers, self.role):
            box.setMaximumWidth(220)
        form = QFormLayout()
        form.addRow("Context size (tokens)", self.context)
        form.addRow("Threads", self.threads)
        form.addRow("GPU layers", self.gpu_layers)
        form.addRow("Role", self.role)
        buttons = QHBoxLayout()
        for button in (self.save_button, self.bench_button, self.remove_button):
            buttons.addWidget(button)
        buttons.addStretch(1)
        installed_page = QWidget()
        page = QVBoxLayout(installed_page)
        page.addWidget(self.installed, 1)
        page.addWidget(self.detail)
        page.addLayout(form)
        page.addLayout(buttons)

        self.downloads = DownloadBar()
        self.downloads.finished.connect(self._downloaded)
        self.recommended = RecommendedTab(self)
        self.search = SearchTab(self)
        self.elsewhere = ElsewhereTab(self)
        self.tabs.addTab(installed_page, "On this computer")
        self.tabs.addTab(self.recommended, "Recommended")
        self.tabs.addTab(self.search, "Search Hugging Face")
        self.tabs.addTab(self.elsewhere, "In other apps")
        layout = QVBoxLayout(self)
        layout.addWidget(self.summary)
        layout.addWidget(self.tabs, 1)
        layout.addWidget(self.message)
        layout.addWidget(self.downloads)
        self._gpu_offload = fit.gpu_offload_supported()
        self.gpu_layers.setEnabled(self._gpu_offload)
        self.gpu_layers.setToolTip("" if self._gpu_offload else
                                   "This llama.cpp build runs on the CPU only")
        self._selected()
        for keys in (QKeySequence(Qt.Key.Key_Escape), QKeySequence("Ctrl+W")):
            QShortcut(keys, self).activated.connect(self.close)

    # --- plumbing --------------------------------------------------------------------------
    def spawn(self, coro: Any) -> asyncio.Future[Any]:
        task = asyncio.ensure_future(self._guard(coro))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def _guard(self, coro: Any) -> None:
        try:
            await coro
        except Exception as exc:  # noqa: BLE001 - shown, never a traceback (error_funnel)
            from desktop_app.ui.error_funnel import user_message

            self.message.setText(f"⚠ {user_message(exc, 'models window')}")

    @property
    def settings(self) -> Settings:
        return self.ctx.settings

    def commit(self, settings: Settings) -> None:
        """Hand ``settings`` to the main window (which saves them off the Qt thread); then
        reread the list."""
        self.settings_changed.emit(settings)
        self.spawn(self.refresh())

    # --- installed --------------------------------------------------------------------------
    async def refresh(self) -> None:
        benches = await self.ctx.store.latest_benchmarks()
        settings = self.settings.model_copy(deep=True)
        self.rows = await asyncio.to_thread(read_rows, settings, benches)
        free = fit.available_memory()
        running = self.running() | set(self.ctx.registry.loaded())
        gpu = "GPU offload available" if self._gpu_offload else "CPU build (no GPU offload)"
        self.summary.setText(f"{size_text(free) if free else 'unknown'} of memory free now · "
                             f"{gpu} · models live in {library.downloads_dir()}")
        self.installed.setRowCount(len(self.rows))
        for index, row in enumerate(self.rows):
            info = row.info
            speed = (f"{row.bench['generation_tokens_per_second']:.1f} tok/s, first token "
                     f"{row.bench['first_token_seconds']:.1f} s" if row.bench else "not measured")
            absent = "set up on first use" if row.bundled else "file missing"
            cells = [row.name + (" (built in)" if row.bundled else ""),
                     state_text(row) if row.name in running else "",
                     info.quantisation if info else "—",
                     size_text(info.total_size) if info else absent,
                     (f"{row.verdict.verdict} ({size_text(row.verdict.needed)} at "
                      f"{row.context:,} tokens)") if row.verdict else "—",
                     speed, str(row.path or "—")]
            for column, text in enumerate(cells):
                item = QTableWidgetItem(text)
                if column == 4 and row.verdict is not None:
                    item.setToolTip(row.verdict.explanation)
                self.installed.setItem(index, column, item)
        self.installed.resizeColumnsToContents()
        self._selected()

    def selected_row(self) -> InstalledRow | None:
        rows = self.installed.selectionModel().selectedRows()
        return self.rows[rows[0].row()] if rows and rows[0].row() < len(self.rows) else None

    def _selected(self) -> None:
        row = self.selected_row()
        for widget in (self.context, self.threads, self.role, self.save_button,
                       self.bench_button, self.remove_button):
            widget.setEnabled(row is not None)
        self.gpu_layers.setEnabled(row is not None and self._gpu_offload and not row.bundled)
        if row is None:  # no values shown for no model (a disabled "512" read as one)
            self.context.setMinimum(0)
            self.context.setSpecialValueText("—")
            self.context.setValue(0)
            self.threads.setSpecialValueText("—")
            self.threads.setValue(0)
            self.detail.setText("Select a model to change its settings, measure it or "
                                "remove it.")
            return
        self.context.setSpecialValueText("")
        self.context.setMinimum(512)
        self.threads.setSpecialValueText("automatic")
        self.remove_button.setEnabled(not row.bundled)
        self.bench_button.setEnabled(row.path is not None and not self.downloads.busy)
        config = library.find_local_model(self.settings, row.name)
        source = config if config is not None else self.settings.bundled
        self.context.setValue(source.context_size)
        self.threads.setValue(source.n_threads or 0)
        self.gpu_layers.setValue(getattr(source, "gpu_layers", 0))
        role = next((r for r in ROLES if r and r in source.roles), "")
        self.role.setCurrentIndex(ROLES.index(role))
        info = row.info
        if info is None:
            self.detail.setText(
                "The built-in model is put together from the app's files the first time it "
                "is used." if row.bundled else f"{row.path} cannot be read: it was moved or "
                "deleted. Remove the model, or put the file back.")
        else:
            template = ("with tool calls" if "tool" in info.chat_template
                        else "present" if info.chat_template else "missing")
            self.detail.setText(
                f"{info.name}: {info.architecture}, {info.parameters / 1e9:.2f} B parameters, "
                f"{info.layers} layers, trained context {info.context_length:,} tokens, chat "
                f"template {template}.")

    def _save_selected(self) -> None:
        row = self.selected_row()
        if row is None:
            return
        settings = self.settings.model_copy(deep=True)
        config = library.find_local_model(settings, row.name)
        target: Any = config if config is not None else settings.bundled
        target.context_size = self.context.value()
        target.n_threads = self.threads.value() or None
        if config is not None:
            config.gpu_layers = self.gpu_layers.value()
        role = ROLES[self.role.currentIndex()]
        target.roles = [r for r in target.roles if r not in ROLES] + ([role] if role else [])
        self.commit(settings)

    def _bench_clicked(self) -> None:
        if self._bench_cancel is not None:  # "Stop measuring"
            self._bench_cancel.set()
            return
        row = self.selected_row()
        if row is None or row.path is None:
            return
        self._bench_cancel = threading.Event()
        self.bench_button.setText("Stop measuring")
        self.spawn(self._bench_selected(row, self._bench_cancel))

    async def _bench_selected(self, row: InstalledRow, cancel: threading.Event) -> None:
        """Measure on the registry's copy of the model (the one the chat uses: never a
        second copy), after any answer being written on it, cancellable."""
        from desktop_app.core.catalogue.bench import BenchCancelled, bench_loaded, model_key

        assert row.path is not None
        self.message.setText(f"Measuring {row.name}… (on the copy the chat uses; after an "
                             "answer being written on it)")
        others_busy = self.busy()
        try:
            llm = await asyncio.to_thread(self.ctx.registry.get, row.name)
            with_model = getattr(llm, "with_model", None)
            if with_model is None:
                raise DesktopAppError(f"{row.name} is not a local model: nothing to measure.")
            self.ctx.residency.used(row.name)
            result = await with_model(
                lambda llama: bench_loaded(llama, llm.load_seconds, cancel=cancel))
        except BenchCancelled:
            self.message.setText(f"Measuring {row.name} was stopped; nothing was saved.")
            return
        finally:
            self._bench_cancel = None
            self.bench_button.setText("Measure speed")
        await self.ctx.store.save_benchmark(model_key=model_key(row.path), model_name=row.name,
                                            results=result.as_dict())
        self.benchmarked.emit()
        await self.refresh()
        overlap = (" Another model was answering meanwhile, so these numbers are lower than "
                   "usual; measure again when it is idle." if others_busy or self.busy()
                   else "")
        self.message.setText(
            f"{row.name}: loads in {result.load_seconds:.1f} s, reads prompts at "
            f"{result.prompt_tokens_per_second:.0f} tok/s, writes at "
            f"{result.generation_tokens_per_second:.1f} tok/s, first token after "
            f"{result.first_token_seconds:.1f} s.{overlap}")

    def _remove_selected(self) -> None:
        row = self.selected_row()
        if row is None or row.bundled:
            return
        downloaded = row.path is not None and library.is_app_download(row.path)
        size = row.info.total_size if row.info else 0
        question = (f"Remove '{row.name}' and delete its file ({size_text(size)} freed)?"
                    if downloaded else
                    f"Remove '{row.name}' from the app? The file stays where it is.")
        answer = QMessageBox.question(self, "Remove model", question)
        if answer != QMessageBox.StandardButton.Yes:
            return
        settings = self.settings.model_copy(deep=True)
        freed = library.remove_local_model(settings, row.name)
        self.commit(settings)
        self.message.setText(f"Removed '{row.name}'" +
                             (f"; {size_text(freed)} freed." if freed else "."))

    # --- adding -----------------------------------------------------------------------------
    def add_file(self, path: Path) -> str:
        """Add a GGUF where it is; returns what happened, for the caller to show."""
        settings = self.settings.model_copy(deep=True)
        added = library.add_local_model(settings, path)
        if added.already:
            return f"{path.name} is already the model '{added.config.name}'."
        self.commit(settings)
        return f"Added '{added.config.name}' (context {added.config.context_size:,} tokens)."

    def _downloaded(self, path: object) -> None:
        assert isinstance(path, Path)
        self.message.setText(self.add_file(path))
        self.tabs.setCurrentIndex(0)

    def showEvent(self, event: Any) -> None:
        super().showEvent(event)
        self.spawn(self.refresh())


def open_models_window(main: Any) -> ModelsWindow:
    """Show the main window's Models window (one, kept between openings)."""
    import shiboken6

    window = getattr(main, "models_window", None)
    if window is None or not shiboken6.isValid(window):
        window = ModelsWindow(main.ctx, main, running=main.controller.loaded_models,
                              busy=lambda: main.controller.active is not None)
        window.settings_changed.connect(main.settings_chosen)
        window.benchmarked.connect(lambda: main.spawn(main.refresh_speeds()))
        main.closed.connect(window.close)
        main.models_window = window
    window.show()
    window.raise_()
    window.activateWindow()
    return window


def add_dropped_models(main: Any, paths: list[Path]) -> None:
    """GGUF files dropped on the main window: add each where it lies, and say so."""
    window = open_models_window(main)
    messages = []
    for path in paths:
        try:
            messages.append(window.add_file(path))
        except Exception as exc:  # noqa: BLE001 - not a model: say why, add the others
            messages.append(getattr(exc, "message", None) or str(exc))
    window.message.setText(" ".join(messages))
