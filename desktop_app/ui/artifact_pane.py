"""The artifact pane: HTML and Markdown documents tools produced, previewed safely.

The ``QWebEngineView`` (and its Chromium helper processes, ~150 MB) is created only when
the first artifact is shown, so the app starts small. Every artifact goes through the
sandbox in ``web_security``. A list switches between the conversation's artifacts; Save as
writes the source to a file the user picks.
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import (
    QFileDialog,
    QFrame,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QRhiWidget,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from desktop_app.ui import theme
from desktop_app.ui.markdown_render import render_html
from desktop_app.ui.web_security import with_csp

if TYPE_CHECKING:
    from PySide6.QtWebEngineCore import QWebEngineProfile
    from PySide6.QtWebEngineWidgets import QWebEngineView

    from desktop_app.ui.web_security import ArtifactPage, BlockingInterceptor

#: setHtml goes through a data: URL, which Chromium caps at 2 MB.
MAX_PREVIEW_BYTES = 1_800_000


@dataclass
class ShownArtifact:
    """One entry of the pane's list."""

    name: str
    mime_type: str
    content: str


def _template(name: str) -> str | None:
    path = theme.RESOURCES_DIR / "templates" / name
    try:
        return path.read_text(encoding="utf-8")
    except OSError:
        return None


def artifact_document(artifact: ShownArtifact) -> str:
    """The HTML document to show for ``artifact``, CSP included."""
    if artifact.mime_type == "text/markdown":
        body = render_html(artifact.content)
        p = theme.active()
        page = _template("markdown_artifact.html") or (
            "<!DOCTYPE html><html><head><meta charset='utf-8'><title>{title}</title></head>"
            "<body style='font-family:sans-serif;max-width:860px;margin:auto;padding:16px;"
            "background:{bg};color:{fg}'>{body}</body></html>")
        document = (page.replace("{title}", html.escape(artifact.name)).replace("{body}", body)
                    .replace("{bg}", p.surface).replace("{fg}", p.text)
                    .replace("{code_bg}", p.code_bg).replace("{border}", p.border))
    elif artifact.mime_type == "text/html":
        document = artifact.content
    else:
        document = f"<pre>{html.escape(artifact.content)}</pre>"
    return with_csp(document)


NO_ARTIFACTS = ("No artifacts yet. Documents that tools make (HTML reports, Markdown "
                "tables) appear here.")


class ArtifactPane(QFrame):
    """A list of artifacts and a sandboxed preview of the selected one."""

    closed = Signal()
    count_changed = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("ArtifactPane")
        self.artifacts: list[ShownArtifact] = []
        self.view: QWebEngineView | None = None  # created on first use
        self.page: ArtifactPage | None = None
        self.profile: QWebEngineProfile | None = None
        self.interceptor: BlockingInterceptor | None = None
        # The web view renders to a texture. The first such widget in a window switches the
        # window to texture composition, which recreates its native window: the first preview
        # turned the whole window black for ~3 s under a new window id. A hidden, empty
        # render-to-texture widget from the start makes the window that way before it is
        # shown (measured: ~60 ms more at start-up, and the id never changes).
        self.composition_primer = QRhiWidget(self)
        self.composition_primer.setFixedSize(0, 0)
        self.composition_primer.hide()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 8, 8, 8)
        header = QHBoxLayout()
        self.title = QLabel("Artifacts")
        self.title.setStyleSheet("font-weight: 600")
        self.title.setMinimumWidth(10)  # may shrink: the buttons matter more in a narrow pane
        self.save_button = QPushButton("Save as…")
        self.save_button.clicked.connect(self.save_current)
        self.save_button.setEnabled(False)
        close = QPushButton("Close")
        close.clicked.connect(self._close)
        header.addWidget(self.title, 1)
        header.addWidget(self.save_button)
        header.addWidget(close)
        layout.addLayout(header)
        self.splitter = QSplitter(Qt.Orientation.Vertical, self)
        self.list = QListWidget(self.splitter)
        self.list.setMaximumHeight(72)
        self.list.currentRowChanged.connect(self._show_row)
        self.placeholder = QLabel(NO_ARTIFACTS)
        self.placeholder.setWordWrap(True)
        self.placeholder.setObjectName("Muted")
        self.splitter.addWidget(self.list)
        self.splitter.addWidget(self.placeholder)
        layout.addWidget(self.splitter, 1)
        self.status = QLabel("")
        self.status.setObjectName("Muted")
        self.status.setWordWrap(True)  # one long line set the pane's minimum width
        layout.addWidget(self.status)

    # --- content -------------------------------------------------------------------------------
    def clear(self) -> None:
        self.artifacts.clear()
        self.list.clear()
        self.placeholder.setText(NO_ARTIFACTS)
        self.count_changed.emit(0)
        self.save_button.setEnabled(False)
        if self.page is not None:
            self.page.show_document(with_csp(""))

    def add_artifact(self, name: str, mime_type: str, content: str, *, show: bool = True) -> None:
        """Add an artifact to the list (and show it)."""
        self.artifacts.append(ShownArtifact(name, mime_type, content))
        item = QListWidgetItem(f"{name}  ·  {mime_type.split('/')[-1]}")
        self.list.addItem(item)
        self.count_changed.emit(len(self.artifacts))
        if show or (self.isVisible() and self.current() is None):
            self.list.setCurrentRow(self.list.count() - 1)
        elif self.current() is None:
            self.placeholder.setText("Pick an artifact above to preview it.")

    def showEvent(self, event: QShowEvent) -> None:
        # Opened with artifacts but none picked: show the newest rather than a blank pane.
        super().showEvent(event)
        if self.current() is None and self.artifacts:
            self.list.setCurrentRow(self.list.count() - 1)

    def current(self) -> ShownArtifact | None:
        row = self.list.currentRow()
        return self.artifacts[row] if 0 <= row < len(self.artifacts) else None

    def _ensure_view(self) -> None:
        if self.view is not None:
            return
        # Imported here: loading QtWebEngine costs memory and start-up time.
        from PySide6.QtWebEngineWidgets import QWebEngineView

        from desktop_app.ui.web_security import ArtifactPage, sandbox_profile

        profile, self.interceptor = sandbox_profile()
        view = QWebEngineView(profile, self.splitter)
        page = ArtifactPage(profile, view)
        view.setPage(page)
        view.setZoomFactor(0.9)  # Chromium's 16 px default looks large next to the chat
        # Its own minimum (~350 px) would widen a small window; pages reflow to any width.
        view.setMinimumSize(160, 120)
        self.profile, self.view, self.page = profile, view, page
        self.placeholder.hide()
        self.splitter.addWidget(view)
        self.splitter.setSizes([60, 640])

    def _show_row(self, row: int) -> None:
        artifact = self.current()
        self.save_button.setEnabled(artifact is not None)
        if artifact is None:
            return
        document = artifact_document(artifact)
        if len(document.encode("utf-8")) > MAX_PREVIEW_BYTES:
            self.status.setText(f"{artifact.name} is too large to preview here; use Save as… "
                                "and open it in a browser.")
            return
        self._ensure_view()
        assert self.page is not None
        self.page.show_document(document)
        self.status.setText("Preview is sandboxed: no network, no files, no pop-ups.")

    # --- saving --------------------------------------------------------------------------------
    def save_current(self) -> None:
        artifact = self.current()
        if artifact is None:
            return
        suffix = {"text/html": ".html", "text/markdown": ".md"}.get(artifact.mime_type, ".txt")
        name = artifact.name if Path(artifact.name).suffix else artifact.name + suffix
        path, _ = QFileDialog.getSaveFileName(self, "Save artifact", str(Path.home() / name))
        if path:
            self.save_to(Path(path))

    def save_to(self, path: Path) -> None:
        """Write the current artifact's source to ``path``; errors are shown in the pane."""
        artifact = self.current()
        if artifact is None:
            return
        try:
            path.write_text(artifact.content, encoding="utf-8")
        except OSError as exc:
            self.status.setText(f"Could not save to {path}: {exc.strerror or exc}. "
                                "Choose another folder.")
            return
        self.status.setText(f"Saved to {path}")

    def _close(self) -> None:
        self.hide()
        self.closed.emit()
