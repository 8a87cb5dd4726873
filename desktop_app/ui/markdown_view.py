"""A widget showing one message's Markdown, rendered once or streamed token by token.

Streaming cost stays flat as an answer grows: text arrives with :meth:`MarkdownView.append`
(a string append, nothing else) and is rendered at most ~30 times a second. Each render
commits the *stable* part of the text (finished paragraphs, closed code fences) into
frozen segment widgets, once, and re-renders only the short unfinished tail. An open code
fence streams into its code widget by appending plain text at the end (no re-highlighting)
and is highlighted once when it closes.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, QTimer, QUrl, Signal
from PySide6.QtGui import (
    QCursor,
    QDesktopServices,
    QFont,
    QFontDatabase,
    QGuiApplication,
    QTextCursor,
)
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QSizePolicy,
    QTextBrowser,
    QToolButton,
    QToolTip,
    QVBoxLayout,
    QWidget,
)

from desktop_app.ui import theme
from desktop_app.ui.markdown_render import (
    CodeSegment,
    ProseSegment,
    find_fence_close,
    find_fence_open,
    highlight,
    link_citations,
    render_segments,
    stable_split,
)

#: Render the streaming message at most this often (ms): about 30 frames a second.
FRAME_MS = 33
#: Commit prose in chunks of at least this many characters (fewer widgets per answer).
MIN_CHUNK = 1200
_SAFE_SCHEMES = {"http", "https", "mailto"}


def _monospace() -> QFont:
    return QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)


class AutoHeightBrowser(QTextBrowser):
    """A read-only rich-text view as tall as its content (no vertical scrollbar)."""

    def __init__(self, parent: QWidget | None = None, *, wrap: bool = True) -> None:
        super().__init__(parent)
        self.setReadOnly(True)
        self.setOpenLinks(False)
        self.anchorClicked.connect(self._open_link)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        if wrap:
            self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
            self.setWordWrapMode(self.wordWrapMode().WrapAtWordBoundaryOrAnywhere)
        else:
            self.setLineWrapMode(QTextBrowser.LineWrapMode.NoWrap)
            self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAsNeeded)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.document().setDocumentMargin(2)
        self.document().setDefaultStyleSheet(theme.document_css(theme.active()))
        self.document().documentLayout().documentSizeChanged.connect(self._fit)
        self.setFixedHeight(8)

    def _fit(self, *_: object) -> None:
        height = int(self.document().size().height()) + 2
        bar = self.horizontalScrollBar()
        if self.lineWrapMode() == QTextBrowser.LineWrapMode.NoWrap and bar.maximum() > 0:
            height += bar.sizeHint().height()
        if height != self.height():
            self.setFixedHeight(height)

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self._fit()

    def wheelEvent(self, event) -> None:
        # Let the chat scroll area scroll; this view never scrolls vertically itself.
        event.ignore()

    @staticmethod
    def _open_link(url: QUrl) -> None:
        if url.scheme() in _SAFE_SCHEMES:
            QDesktopServices.openUrl(url)


class CodeBlockWidget(QFrame):
    """A code block: a header with the language and a Copy button, then the code."""

    def __init__(self, code: str = "", language: str = "", *, streaming: bool = False,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("CodeBlock")
        self.code = code
        self.language = language
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 2, 6, 4)
        layout.setSpacing(0)
        header = QHBoxLayout()
        self.language_label = QLabel(language or "text")
        self.language_label.setObjectName("CodeBlockHeader")
        self.copy_button = QToolButton()
        self.copy_button.setText("Copy")
        self.copy_button.setToolTip("Copy this code to the clipboard")
        self.copy_button.clicked.connect(self.copy)
        # A child timer dies with the widget (a bare singleShot would fire on a dead button).
        self._copied_timer = QTimer(self)
        self._copied_timer.setSingleShot(True)
        self._copied_timer.setInterval(1500)
        self._copied_timer.timeout.connect(lambda: self.copy_button.setText("Copy"))
        header.addWidget(self.language_label)
        header.addStretch(1)
        header.addWidget(self.copy_button)
        layout.addLayout(header)
        self.view = AutoHeightBrowser(self, wrap=False)
        self.view.setFont(_monospace())
        self.view.document().setDefaultFont(_monospace())
        layout.addWidget(self.view)
        if streaming:
            self.view.setPlainText(code)
        else:
            self.finish(code)

    def append_text(self, text: str) -> None:
        """Stream more code in, plain, at the end (cheap: no re-highlighting)."""
        self.code += text
        cursor = QTextCursor(self.view.document())
        cursor.movePosition(QTextCursor.MoveOperation.End)
        cursor.insertText(text)

    def finish(self, code: str) -> None:
        """Show the complete code, syntax-highlighted (done once per block)."""
        self.code = code
        style = theme.active().pygments_style
        self.view.setHtml(f"<pre style='margin:0'>{highlight(code, self.language, style)}</pre>")

    def copy(self) -> None:
        QGuiApplication.clipboard().setText(self.code)
        self.copy_button.setText("Copied")
        self._copied_timer.start()


class MarkdownView(QWidget):
    """Markdown rendered as a column of prose and code widgets; supports streaming."""

    rendered = Signal()
    #: A citation link "[n]" was clicked: the passage number.
    citation_clicked = Signal(int)

    def __init__(self, text: str = "", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        #: Passages the answer may cite, by number (``core.documents.citations``).
        self.citations: dict[int, object] = {}
        self._layout = QVBoxLayout(self)
        self._layout.setContentsMargins(0, 0, 0, 0)
        self._layout.setSpacing(4)
        self._text = ""
        self._committed = 0          # text[:_committed] lives in frozen widgets
        self._tail: AutoHeightBrowser | None = None
        self._code: CodeBlockWidget | None = None
        self._code_fence = ""
        self._code_body_start = 0
        self._code_shown = 0
        self._streaming = False
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(FRAME_MS)
        self._timer.timeout.connect(self.flush)
        if text:
            self.set_markdown(text)

    # --- static ------------------------------------------------------------------------------
    def text(self) -> str:
        return self._text

    def set_markdown(self, text: str) -> None:
        """Replace everything with ``text``, rendered in one go."""
        self._clear()
        self._text = text
        self._add_segments(text)
        self._committed = len(text)
        self.rendered.emit()

    def _clear(self) -> None:
        while self._layout.count():
            item = self._layout.takeAt(0)
            if item.widget() is not None:
                item.widget().deleteLater()
        self._tail = None
        self._code = None
        self._committed = 0

    def _add_segments(self, text: str) -> None:
        index = self._layout.count() - (1 if self._tail is not None else 0)
        for segment in render_segments(text):
            widget: QWidget
            if isinstance(segment, ProseSegment):
                browser = AutoHeightBrowser(self)
                if self.citations:
                    browser.setHtml(link_citations(segment.html, set(self.citations)))
                    browser.anchorClicked.connect(self._citation_link)
                    browser.highlighted.connect(self._citation_hover)
                else:
                    browser.setHtml(segment.html)
                widget = browser
            else:
                assert isinstance(segment, CodeSegment)
                widget = CodeBlockWidget(segment.code, segment.language, parent=self)
            self._layout.insertWidget(index, widget)
            index += 1

    def set_citations(self, passages: dict[int, object]) -> None:
        """Link "[n]" to these passages (re-renders a finished text once)."""
        if passages == self.citations:
            return
        self.citations = dict(passages)
        if self._text and not self._streaming:
            self.set_markdown(self._text)

    def _citation_link(self, url: QUrl) -> None:
        if url.scheme() == "cite" and url.path().isdigit():
            self.citation_clicked.emit(int(url.path()))

    def _citation_hover(self, url: QUrl) -> None:
        passage = self.citations.get(int(url.path())) if (
            url.scheme() == "cite" and url.path().isdigit()) else None
        if passage is None:
            QToolTip.hideText()
            return
        text = getattr(passage, "text", "")
        preview = text if len(text) <= 600 else text[:600].rsplit(" ", 1)[0] + " …"
        QToolTip.showText(QCursor.pos(), f"{getattr(passage, 'label', '')}\n\n{preview}", self)

    # --- streaming ---------------------------------------------------------------------------
    def start_stream(self) -> None:
        self._clear()
        self._text = ""
        self._streaming = True

    def append(self, delta: str) -> None:
        """Add streamed text; it is rendered within one frame (throttled)."""
        if not self._streaming:
            self.start_stream()
        self._text += delta
        if not self._timer.isActive():
            self._timer.start()

    def finish_stream(self) -> None:
        """Render whatever is left; the view becomes static."""
        self._timer.stop()
        self.flush(final=True)
        self._streaming = False

    @property
    def streaming(self) -> bool:
        return self._streaming

    def flush(self, final: bool = False) -> None:
        """Render new text: commit stable pieces once, re-render only the unstable tail."""
        text = self._text
        while True:
            if self._code is not None:
                close = find_fence_close(text, self._code_body_start, self._code_fence)
                if close is None and not final:
                    # Hold back a last partial line: it may be the closing fence arriving.
                    end = text.rfind("\n") + 1
                    if end > self._code_shown:
                        self._code.append_text(text[self._code_shown:end])
                        self._code_shown = end
                    break
                body_end = close[0] if close else len(text)
                self._code.finish(text[self._code_body_start:body_end].rstrip("\n"))
                self._committed = close[1] if close else len(text)
                self._code = None
                continue
            fence = find_fence_open(text, self._committed)
            if fence is not None:
                self._commit(fence.start)
                self._code = CodeBlockWidget("", fence.language, streaming=True, parent=self)
                self._layout.insertWidget(self._tail_index(), self._code)
                self._code_fence = fence.marker
                self._code_body_start = self._code_shown = fence.body_start
                self._committed = fence.body_start
                continue
            tail = text[self._committed:]
            if final:
                self._commit(len(text))
            else:
                cut = stable_split(tail, MIN_CHUNK)
                if cut:
                    self._commit(self._committed + cut)
                self._render_tail(text[self._committed:])
            break
        self.rendered.emit()

    def _tail_index(self) -> int:
        return self._layout.count() - (1 if self._tail is not None else 0)

    def _commit(self, end: int) -> None:
        # The tail showed text[_committed:]; it is re-created for what stays unstable.
        self._remove_tail()
        piece = self._text[self._committed:end]
        if piece.strip():
            self._add_segments(piece)
        self._committed = end

    def _remove_tail(self) -> None:
        if self._tail is not None:
            self._layout.removeWidget(self._tail)
            self._tail.deleteLater()
            self._tail = None

    def _render_tail(self, tail: str) -> None:
        if not tail.strip():
            self._remove_tail()
            return
        if self._tail is None:
            self._tail = AutoHeightBrowser(self)
            self._layout.addWidget(self._tail)
        parts = render_segments(tail)
        html = "".join(p.html if isinstance(p, ProseSegment)
                       else f"<pre>{highlight(p.code, p.language)}</pre>" for p in parts)
        self._tail.setHtml(html)

    def segment_widgets(self) -> list[QWidget]:
        """The widgets currently showing this message (for tests and benchmarks)."""
        return [self._layout.itemAt(i).widget() for i in range(self._layout.count())]

    def code_blocks(self) -> list[CodeBlockWidget]:
        return [w for w in self.segment_widgets() if isinstance(w, CodeBlockWidget)]
