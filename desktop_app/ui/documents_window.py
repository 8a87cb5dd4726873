"""The Documents window: collections, their folders, indexing progress, errors per file.

Indexing runs in a worker thread (``DocumentLibrary.sync_async``); the worker only writes
its progress into an object this window polls five times a second, so no Qt call ever
happens off the Qt thread. Cancel stops after the file being read (it is kept).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QInputDialog,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QProgressBar,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

#: Rows shown in the file table (failures first); the CLI lists them all.
MAX_FILE_ROWS = 1000


class DocumentsWindow(QDialog):
    """Manage collections; ``changed`` fires when collections were added or removed."""

    changed = Signal()

    def __init__(self, library: Any, spawn: Any, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.library = library
        self.spawn = spawn
        self.setWindowTitle("Documents")
        self.resize(900, 560)
        self._task: asyncio.Task[Any] | None = None
        self._progress: Any = None
        self._dialog: QWidget | None = None
        layout = QVBoxLayout(self)
        intro = QLabel("Collections of your files the assistant can search and cite. They "
                       "are indexed on this computer and kept up to date while the app runs; "
                       "attach one to a chat with the Documents button under the message box.")
        intro.setObjectName("Muted")
        intro.setWordWrap(True)
        layout.addWidget(intro)
        body = QHBoxLayout()
        left = QVBoxLayout()
        self.collection_list = QListWidget(self)
        self.collection_list.currentItemChanged.connect(lambda *_: self._show_files())
        left.addWidget(self.collection_list, 1)
        self.new_button = QPushButton("New collection…")
        self.new_button.clicked.connect(self._ask_name)
        left.addWidget(self.new_button)
        body.addLayout(left, 1)
        right = QVBoxLayout()
        self.sources_label = QLabel("")
        self.sources_label.setWordWrap(True)
        self.sources_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        right.addWidget(self.sources_label)
        self.files = QTableWidget(0, 3, self)
        self.files.setHorizontalHeaderLabels(["File", "Passages", "Status"])
        self.files.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.files.verticalHeader().hide()
        header = self.files.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.Stretch)
        right.addWidget(self.files, 1)
        actions = QHBoxLayout()
        self.add_folder_button = QPushButton("Add folder…")
        self.add_folder_button.clicked.connect(lambda: self._pick(folder=True))
        self.add_files_button = QPushButton("Add files…")
        self.add_files_button.clicked.connect(lambda: self._pick(folder=False))
        self.reindex_button = QPushButton("Reindex")
        self.reindex_button.setToolTip("Pick up changes now (Shift: read every file again)")
        self.reindex_button.clicked.connect(self._reindex)
        self.remove_button = QPushButton("Remove collection")
        self.remove_button.setToolTip("Forget this collection's index (your files stay)")
        self.remove_button.clicked.connect(self._remove)
        for button in (self.add_folder_button, self.add_files_button, self.reindex_button):
            actions.addWidget(button)
        actions.addStretch(1)
        actions.addWidget(self.remove_button)
        right.addLayout(actions)
        body.addLayout(right, 3)
        layout.addLayout(body, 1)
        progress_row = QHBoxLayout()
        self.progress = QProgressBar(self)
        self.progress.setTextVisible(False)
        self.progress_label = QLabel("")
        self.progress_label.setObjectName("Muted")
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.clicked.connect(self.cancel)
        progress_row.addWidget(self.progress_label, 2)
        progress_row.addWidget(self.progress, 1)
        progress_row.addWidget(self.cancel_button)
        layout.addLayout(progress_row)
        self._timer = QTimer(self)
        self._timer.setInterval(200)
        self._timer.timeout.connect(self._show_progress)
        self._set_busy(False)
        self.refresh()

    # --- showing -----------------------------------------------------------------------
    def refresh(self, select: str | None = None) -> None:
        current = select or self.current()
        self.collection_list.blockSignals(True)
        self.collection_list.clear()
        for info in self.library.collections():
            failed = f" · {info.failed} failed" if info.failed else ""
            item = QListWidgetItem(f"{info.name}\n{info.indexed} files · {info.chunks} "
                                   f"passages{failed}")
            item.setData(Qt.ItemDataRole.UserRole, info.name)
            self.collection_list.addItem(item)
            if info.name == current:
                self.collection_list.setCurrentItem(item)
        if self.collection_list.currentItem() is None and self.collection_list.count():
            self.collection_list.setCurrentRow(0)
        self.collection_list.blockSignals(False)
        self._show_files()

    def current(self) -> str | None:
        item = self.collection_list.currentItem()
        return item.data(Qt.ItemDataRole.UserRole) if item is not None else None

    def _show_files(self) -> None:
        name = self.current()
        has = name is not None
        for button in (self.add_folder_button, self.add_files_button, self.reindex_button,
                       self.remove_button):
            button.setEnabled(has and self._task is None)
        self.files.setRowCount(0)
        if not has:
            self.sources_label.setText("No collection yet: make one with New collection…")
            return
        info = self.library.collection(name)
        folders = "\n".join(info.sources) or "(no folders or files yet)"
        self.sources_label.setText(f"<b>{info.name}</b> indexes:<br>"
                                   + folders.replace("\n", "<br>"))
        statuses = sorted(self.library.files(name), key=lambda f: (f.status != "error", f.path))
        shown = statuses[:MAX_FILE_ROWS]
        self.files.setRowCount(len(shown))
        roots = sorted((Path(p) for p in info.sources), key=lambda p: len(str(p)), reverse=True)
        for row, status in enumerate(shown):
            path_item = QTableWidgetItem(_relative(Path(status.path), roots))
            path_item.setToolTip(status.path)
            self.files.setItem(row, 0, path_item)
            self.files.setItem(row, 1, QTableWidgetItem(str(status.chunks)))
            text = f"✗ {status.error}" if status.status == "error" else "✓ indexed"
            state = QTableWidgetItem(text)
            state.setToolTip(status.error or "")
            self.files.setItem(row, 2, state)

    # --- actions -----------------------------------------------------------------------
    def _ask_name(self) -> None:
        dialog = QInputDialog(self)
        dialog.setWindowTitle("New collection")
        dialog.setLabelText("Name of the collection (e.g. Work, Manuals, Recipes):")
        dialog.textValueSelected.connect(self._named)
        self._dialog = dialog
        dialog.open()  # not exec(): a nested event loop would stall the asyncio loop

    def _named(self, name: str) -> None:
        if name.strip():
            self._pick(folder=True, name=name.strip())

    def _pick(self, *, folder: bool, name: str | None = None) -> None:
        target = name or self.current()
        if target is None:
            return
        dialog = QFileDialog(self, "Add a folder" if folder else "Add files", str(Path.home()))
        if folder:
            dialog.setFileMode(QFileDialog.FileMode.Directory)
            dialog.setOption(QFileDialog.Option.ShowDirsOnly, True)
        else:
            from desktop_app.core.documents import SUPPORTED_SUFFIXES

            dialog.setFileMode(QFileDialog.FileMode.ExistingFiles)
            patterns = " ".join(f"*{s}" for s in sorted(SUPPORTED_SUFFIXES))
            dialog.setNameFilter(f"Documents ({patterns})")
        dialog.filesSelected.connect(
            lambda paths: self.add_paths(target, [Path(p) for p in paths]))
        self._dialog = dialog
        dialog.open()

    def add_paths(self, name: str, paths: list[Path]) -> None:
        from desktop_app.core.documents import CollectionError

        try:
            self.library.add_paths(name, paths)
        except CollectionError as exc:
            self.progress_label.setText(str(exc))
            return
        self.refresh(select=name)
        self.changed.emit()
        self.start_sync(name)

    def _reindex(self) -> None:
        from PySide6.QtWidgets import QApplication

        name = self.current()
        if name is not None:
            full = bool(QApplication.keyboardModifiers() & Qt.KeyboardModifier.ShiftModifier)
            self.start_sync(name, force=full)

    def _remove(self) -> None:
        name = self.current()
        if name is None:
            return
        self.library.remove_collection(name)
        self.refresh()
        self.changed.emit()
        self.progress_label.setText(f"Removed '{name}' (your files are untouched).")

    # --- indexing ----------------------------------------------------------------------
    def start_sync(self, name: str, *, force: bool = False) -> None:
        if self._task is not None:
            return
        self._task = asyncio.ensure_future(self._sync(name, force))

    async def _sync(self, name: str, force: bool) -> None:
        from desktop_app.core.errors import DesktopAppError

        self._progress = None
        self._set_busy(True)
        message = ""
        try:
            report = await self.library.sync_async(
                name, progress=lambda state: setattr(self, "_progress", state), force=force)
            # The collection's state, not this pass's: the folder watch may have indexed
            # the files a moment before.
            info = self.library.collection(name)
            failed = f", {info.failed} could not be read" if info.failed else ""
            message = (f"{info.name} is up to date: {info.indexed} files indexed "
                       f"({info.chunks} passages){failed}. This pass read {report.indexed} "
                       f"in {report.seconds:.1f} s.")
        except asyncio.CancelledError:
            message = f"Indexing of '{name}' cancelled; the files done so far are kept."
        except DesktopAppError as exc:
            message = str(exc)
        finally:
            self._task = None
            self._set_busy(False)
            self.progress_label.setText(message)
            self.refresh(select=name)

    async def wait(self) -> None:
        """Until the running sync (if any) ends (tests, closing)."""
        task = self._task
        if task is not None:
            await asyncio.gather(task, return_exceptions=True)

    def cancel(self) -> None:
        if self._task is not None:
            self._task.cancel()

    def _set_busy(self, busy: bool) -> None:
        self.progress.setVisible(busy)
        self.cancel_button.setVisible(busy)
        self.new_button.setEnabled(not busy)
        if busy:
            self.progress.setRange(0, 0)
            self.progress_label.setText("Scanning…")
            self._timer.start()
        else:
            self._timer.stop()
            self._show_files()

    def _show_progress(self) -> None:
        state = self._progress
        if state is None or not state.total:
            return
        self.progress.setRange(0, state.total)
        self.progress.setValue(state.done)
        verb = "Embedding again" if state.phase == "embedding" else "Indexing"
        current = f" · {Path(state.current).name}" if state.current else ""
        self.progress_label.setText(f"{verb} {state.done}/{state.total}{current}")

    def closeEvent(self, event: Any) -> None:
        # Indexing goes on in the background; the window only stops showing it.
        self._timer.stop()
        super().closeEvent(event)


def _relative(path: Path, roots: list[Path]) -> str:
    """``path`` below the folder the user added (the full path is in the tooltip)."""
    for root in roots:
        if path == root:
            return path.name
        if path.is_relative_to(root):
            return str(path.relative_to(root))
    return str(path)
