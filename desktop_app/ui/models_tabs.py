"""The Models window's other tabs: recommended models, a Hugging Face search, and GGUF
files other apps downloaded. Each works through its ``ModelsWindow`` (downloads, adding,
background tasks)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, Protocol

from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from desktop_app.core.catalogue import fit, hub, library
from desktop_app.core.catalogue.recommended import Recommended, load_recommended
from desktop_app.core.catalogue.scan import FoundModel, scan_other_apps
from desktop_app.core.errors import DesktopAppError


class ModelsHost(Protocol):
    """What the tabs use of the Models window."""

    downloads: Any  # DownloadBar
    message: QLabel

    def spawn(self, coro: Any) -> Any: ...

    def add_file(self, path: Path) -> str: ...

GiB = 1024**3
#: Context a new model gets by default (``library.DEFAULT_CONTEXT``), for the fit column.
_FIT_CONTEXT = library.DEFAULT_CONTEXT


def data_table(headers: list[str]) -> QTableWidget:
    """A read-only table whose rows are selected whole, one at a time."""
    table = QTableWidget(0, len(headers))
    table.setHorizontalHeaderLabels(headers)
    table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
    table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    table.horizontalHeader().setStretchLastSection(True)
    table.verticalHeader().hide()
    return table


def _fill(table: QTableWidget, rows: list[list[str]], tips: list[str] | None = None) -> None:
    table.setRowCount(len(rows))
    for index, cells in enumerate(rows):
        for column, text in enumerate(cells):
            item = QTableWidgetItem(text)
            if tips and tips[index]:
                item.setToolTip(tips[index])
            table.setItem(index, column, item)
    table.resizeColumnsToContents()


def _selected_index(table: QTableWidget) -> int | None:
    rows = table.selectionModel().selectedRows()
    return rows[0].row() if rows else None


class RecommendedTab(QWidget):
    """Curated chat models by size, with whether each fits this machine."""

    def __init__(self, window: ModelsHost) -> None:
        super().__init__()
        self.window_ = window
        self.models: list[Recommended] = load_recommended()
        self.table = data_table(["Model", "Class", "Download", "Tool calls", "Licence",
                             f"Fits here ({_FIT_CONTEXT:,} tokens)"])
        self.download_button = QPushButton("Download")
        self.download_button.clicked.connect(self._download)
        layout = QVBoxLayout(self)
        note = QLabel("Instruct-tuned chat models that run on laptops. 'Tool calls': trained "
                      "to call tools (the agent works best with these).")
        note.setWordWrap(True)
        note.setObjectName("Muted")
        layout.addWidget(note)
        layout.addWidget(self.table, 1)
        row = QHBoxLayout()
        row.addStretch(1)
        row.addWidget(self.download_button)
        layout.addLayout(row)
        self.refresh()

    def refresh(self) -> None:
        free = fit.available_memory()
        verdicts = [m.fit(_FIT_CONTEXT, free) for m in self.models]
        _fill(self.table, [[m.name, m.size_class, f"≈ {m.approx_size / GiB:.1f} GiB",
                            "yes" if m.tools else "no", m.licence,
                            f"{v.verdict} (needs {v.needed / GiB:.1f} GiB)"]
                           for m, v in zip(self.models, verdicts, strict=True)],
              [v.explanation for v in verdicts])

    def _download(self) -> None:
        index = _selected_index(self.table)
        if index is None or self.window_.downloads.busy:
            return
        chosen = self.models[index]
        self.window_.spawn(self._start(chosen))

    async def _start(self, chosen: Recommended) -> None:
        self.window_.message.setText(f"Asking the hub about {chosen.repo}…")
        models = await asyncio.to_thread(hub.list_quantisations, chosen.repo)
        match = next((m for m in models if chosen.file in m.files), None)
        if match is None:
            self.window_.message.setText(f"{chosen.repo} no longer has {chosen.file}; use "
                                         "the search tab to pick another file.")
            return
        self.window_.message.setText("")
        self.window_.downloads.start(match, library.repo_folder(chosen.repo))


class SearchTab(QWidget):
    """Search GGUF repos, list one's quantisations, download one."""

    def __init__(self, window: ModelsHost) -> None:
        super().__init__()
        self.window_ = window
        self.query = QLineEdit()
        self.query.setPlaceholderText("Search GGUF models, e.g. 'qwen2.5 7b instruct'")
        self.query.returnPressed.connect(lambda: window.spawn(self._search()))
        self.search_button = QPushButton("Search")
        self.search_button.clicked.connect(lambda: window.spawn(self._search()))
        self.repos = QListWidget()
        self.repos.currentTextChanged.connect(
            lambda repo: window.spawn(self._list(repo.split("  ")[0])) if repo else None)
        self.files = data_table(["Quantisation", "Size", "Fits here (estimate)", "File"])
        self.download_button = QPushButton("Download")
        self.download_button.clicked.connect(self._download)
        self.status = QLabel()
        self.status.setObjectName("Muted")
        self.quantisations: list[hub.RemoteModel] = []
        self.repo = ""
        top = QHBoxLayout()
        top.addWidget(self.query, 1)
        top.addWidget(self.search_button)
        middle = QHBoxLayout()
        middle.addWidget(self.repos, 1)
        middle.addWidget(self.files, 2)
        bottom = QHBoxLayout()
        bottom.addWidget(self.status, 1)
        bottom.addWidget(self.download_button)
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addLayout(middle, 1)
        layout.addLayout(bottom)

    async def _search(self) -> None:
        text = self.query.text().strip()
        if not text:
            return
        self.status.setText("Searching…")
        try:
            found = await asyncio.to_thread(hub.search_models, text, 30)
        except DesktopAppError as exc:  # the hub's errors and the offline lock's
            self.status.setText(str(exc))
            return
        self.repos.clear()
        self.repos.addItems([f"{r.repo}  ({r.downloads:,} downloads)" for r in found])
        self.status.setText(f"{len(found)} repos" if found else "Nothing found.")

    async def _list(self, repo: str) -> None:
        self.status.setText(f"Listing {repo}…")
        try:
            models = await asyncio.to_thread(hub.list_quantisations, repo)
        except DesktopAppError as exc:  # the hub's errors and the offline lock's
            self.status.setText(str(exc))
            return
        self.repo, self.quantisations = repo, models
        free = fit.available_memory()
        # No header yet: weights from the file size, the context from a typical share.
        verdicts = [fit.judge_fit(fit.MemoryEstimate(_FIT_CONTEXT, m.size, m.size // 8, 0, 0),
                                  free) for m in models]
        _fill(self.files, [[m.quantisation, f"{m.size / GiB:.2f} GiB", v.verdict,
                            m.filename + (f" (+{len(m.files) - 1} parts)" if len(m.files) > 1
                                          else "")]
                           for m, v in zip(models, verdicts, strict=True)])
        self.status.setText(f"{len(models)} GGUF files in {repo}")

    def _download(self) -> None:
        index = _selected_index(self.files)
        if index is None or self.window_.downloads.busy:
            return
        self.window_.downloads.start(self.quantisations[index], library.repo_folder(self.repo))


class ElsewhereTab(QWidget):
    """GGUF models LM Studio, Ollama, the HF cache, GPT4All or Jan already downloaded."""

    def __init__(self, window: ModelsHost) -> None:
        super().__init__()
        self.window_ = window
        self.found: list[FoundModel] = []
        self.table = data_table(["App", "Model", "Size", "Path"])
        self.scan_button = QPushButton("Look again")
        self.scan_button.clicked.connect(lambda: window.spawn(self.scan()))
        self.add_button = QPushButton("Add (no copy)")
        self.add_button.clicked.connect(self._add)
        self.status = QLabel()
        self.status.setObjectName("Muted")
        row = QHBoxLayout()
        row.addWidget(self.status, 1)
        row.addWidget(self.scan_button)
        row.addWidget(self.add_button)
        layout = QVBoxLayout(self)
        layout.addWidget(self.table, 1)
        layout.addLayout(row)

    async def scan(self) -> None:
        self.status.setText("Looking in other apps' model folders…")
        self.found = await asyncio.to_thread(scan_other_apps)
        _fill(self.table, [[m.app, m.name, f"{m.size / GiB:.2f} GiB", str(m.path)]
                           for m in self.found])
        self.status.setText(f"{len(self.found)} models found" if self.found else
                            "No models found in the folders of LM Studio, Ollama, the Hugging "
                            "Face cache, GPT4All, Jan or llama.cpp.")

    def _add(self) -> None:
        index = _selected_index(self.table)
        if index is None:
            return
        try:
            self.status.setText(self.window_.add_file(self.found[index].path))
        except Exception as exc:  # noqa: BLE001 - a broken file: say so
            self.status.setText(getattr(exc, "message", None) or str(exc))

    def showEvent(self, event: object) -> None:
        super().showEvent(event)  # type: ignore[arg-type]
        if not self.found:
            self.window_.spawn(self.scan())
