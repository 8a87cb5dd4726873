"""Drop a GGUF file on the window to add it as a model (where it lies, nothing copied)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QEvent, QObject
from PySide6.QtGui import QDragEnterEvent, QDropEvent
from PySide6.QtWidgets import QWidget


def gguf_paths(urls: list[object]) -> list[Path]:
    """The local .gguf files among dropped URLs."""
    out = []
    for url in urls:
        local = url.toLocalFile() if hasattr(url, "toLocalFile") else ""
        if local and local.lower().endswith(".gguf"):
            out.append(Path(local))
    return out


class GgufDropFilter(QObject):
    """Accepts drags carrying .gguf files and hands the files to ``on_drop``."""

    def __init__(self, target: QWidget, on_drop: Callable[[list[Path]], None]) -> None:
        super().__init__(target)
        self._on_drop = on_drop
        target.setAcceptDrops(True)
        target.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() in (QEvent.Type.DragEnter, QEvent.Type.DragMove):
            assert isinstance(event, QDragEnterEvent)
            if gguf_paths(list(event.mimeData().urls())):
                event.acceptProposedAction()
                return True
        elif event.type() == QEvent.Type.Drop:
            assert isinstance(event, QDropEvent)
            paths = gguf_paths(list(event.mimeData().urls()))
            if paths:
                event.acceptProposedAction()
                self._on_drop(paths)
                return True
        return super().eventFilter(watched, event)
