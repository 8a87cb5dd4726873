"""The download bar of the Models window: one download at a time, with progress, speed,
time left, pause/resume and cancel.

The transfer runs on a worker thread (``asyncio.to_thread``); its progress reaches the Qt
thread through a queued signal, at most every 200 ms so a fast loopback transfer cannot
flood the event loop.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QProgressBar, QPushButton, QWidget

from desktop_app.core.catalogue import hub
from desktop_app.core.errors import DesktopAppError

MiB = 1024 * 1024


class _ProgressRelay(QObject):
    progress = Signal(int, int, float, object)  # done, total, speed, seconds left


def describe_progress(done: int, total: int, speed: float, left: float | None) -> str:
    share = done / total * 100 if total else 0.0
    text = f"{share:.0f}% · {done / MiB:,.0f} of {total / MiB:,.0f} MiB · {speed / MiB:.1f} MiB/s"
    if left is not None:
        text += f" · {left / 60:.0f} min left" if left >= 90 else f" · {left:.0f} s left"
    return text


class DownloadBar(QWidget):
    """Shows and controls the running download; hidden when there is none."""

    #: A download finished and was verified: the model's first file.
    finished = Signal(object)
    #: A download failed (message) or was cancelled ("").
    failed = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.label = QLabel()
        self.label.setObjectName("Muted")
        self.bar = QProgressBar()
        self.bar.setRange(0, 1000)
        self.pause_button = QPushButton("Pause")
        self.pause_button.clicked.connect(self._pause_or_resume)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.clicked.connect(self.cancel)
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 4, 0, 0)
        row.addWidget(self.label, 2)
        row.addWidget(self.bar, 1)
        row.addWidget(self.pause_button)
        row.addWidget(self.cancel_button)
        self.relay = _ProgressRelay()
        self.relay.progress.connect(self._show)
        self.model: hub.RemoteModel | None = None
        self.folder: Path | None = None
        self.control = hub.DownloadControl()
        self.task: asyncio.Task[None] | None = None
        self._last_report = 0.0
        self.hide()

    @property
    def busy(self) -> bool:
        return self.task is not None and not self.task.done()

    def start(self, model: hub.RemoteModel, folder: Path) -> None:
        """Download ``model`` into ``folder`` (resuming a partial file left there)."""
        self.model, self.folder = model, folder
        self.control = hub.DownloadControl()
        self.pause_button.setText("Pause")
        self.label.setText(f"Starting {model.filename}…")
        self.bar.setValue(0)
        self.show()
        self.task = asyncio.ensure_future(self._run())

    def _report(self, progress: hub.DownloadProgress) -> None:
        """Called on the worker thread."""
        now = time.monotonic()
        if now - self._last_report < 0.2 and progress.done < progress.total:
            return
        self._last_report = now
        self.relay.progress.emit(progress.done, progress.total, progress.speed,
                                 progress.seconds_left)

    def _show(self, done: int, total: int, speed: float, left: object) -> None:
        name = self.model.filename if self.model else ""
        self.label.setText(f"{name}: " + describe_progress(
            done, total, speed, left if isinstance(left, float) else None))
        self.bar.setValue(int(done / total * 1000) if total else 0)

    async def _run(self) -> None:
        assert self.model is not None and self.folder is not None
        try:
            path = await asyncio.to_thread(hub.download_model, self.model, self.folder,
                                           on_progress=self._report, control=self.control)
        except hub.DownloadStopped as stopped:
            if stopped.cancelled:
                self.hide()
                self.failed.emit("")
            else:
                self.label.setText(f"{self.model.filename}: paused (the part downloaded so "
                                   "far is kept)")
                self.pause_button.setText("Resume")
            return
        except DesktopAppError as exc:  # the hub's errors and the offline lock's
            self.label.setText(str(exc))
            self.pause_button.setText("Retry")
            self.failed.emit(str(exc))
            return
        self.hide()
        self.finished.emit(path)

    def _pause_or_resume(self) -> None:
        if self.busy:
            self.control.pause.set()
        elif self.model is not None and self.folder is not None:
            self.start(self.model, self.folder)

    def cancel(self) -> None:
        if self.busy:
            self.control.cancel.set()
            return
        if self.model is not None and self.folder is not None:  # paused: drop the part
            for name in self.model.files:
                (self.folder / (Path(name).name + ".part")).unlink(missing_ok=True)
        self.hide()
        self.failed.emit("")
