"""Markdown to Qt rich text: markdown-it-py for CommonMark, Pygments for code.

Qt-free on purpose (only strings in and out) so it is cheap to test and benchmark.

A message is rendered as a list of *segments*: prose (HTML for a ``QTextBrowser``) and code
blocks (kept apart so each gets its own widget with a Copy button). For streaming, the
helpers here find how much of a growing text is *stable* (cannot change meaning when more
text arrives), so the chat view renders each stable piece once and only re-renders the
short unstable tail.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from markdown_it import MarkdownIt


@dataclass(frozen=True)
class ProseSegment:
    """Rendered HTML of consecutive non-code blocks."""

    html: str


@dataclass(frozen=True)
class CodeSegment:
    """One fenced or indented code block: its source and language."""

    code: str
    language: str


Segment = ProseSegment | CodeSegment

_FENCE_RE = re.compile(r" {0,3}(`{3,}|~{3,})([^`\n]*)$")


@lru_cache(maxsize=1)
def _md() -> MarkdownIt:
    from markdown_it import MarkdownIt  # imported on first use: not needed to open the window

    # html=False: model output is untrusted; raw HTML in it is shown as text, never parsed.
    # breaks=True: a line break the model wrote is kept (a poem, an address, a list of
    # steps without Markdown markers); strict CommonMark joined them into one line.
    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False,
                                   "breaks": True})
    md.enable(["table", "strikethrough"])
    md.core.ruler.before("inline", "arithmetic_stars", _arithmetic_stars)
    return md


_BETWEEN_DIGITS = re.compile(r"(?<=\d)\*(?=\d)")
_CODE_SPAN = re.compile(r"(`+)(.+?)\1", re.DOTALL)


def _arithmetic_stars(state: Any) -> None:
    """A ``*`` between digits is multiplication ("12*12 + 7*8 = 200" rendered "12" then
    "12 + 7" in italics): escaped before inline parsing, outside code spans."""
    for token in state.tokens:
        if token.type != "inline" or "*" not in token.content:
            continue
        parts, last = [], 0
        for span in _CODE_SPAN.finditer(token.content):
            parts.append(_BETWEEN_DIGITS.sub(r"\\*", token.content[last:span.start()]))
            parts.append(span.group(0))
            last = span.end()
        parts.append(_BETWEEN_DIGITS.sub(r"\\*", token.content[last:]))
        token.content = "".join(parts)


def render_segments(text: str) -> list[Segment]:
    """Split and render ``text`` into prose and code segments, in order."""
    md = _md()
    env: dict[str, object] = {}
    tokens = md.parse(text, env)
    segments: list[Segment] = []
    pending: list[Any] = []

    def flush() -> None:
        if pending:
            rendered = md.renderer.render(pending, md.options, env).strip()
            if rendered:
                segments.append(ProseSegment(rendered))
            pending.clear()

    for token in tokens:
        if token.level == 0 and token.type in ("fence", "code_block"):
            flush()
            language = (token.info or "").strip().split(" ")[0] if token.type == "fence" else ""
            segments.append(CodeSegment(token.content.rstrip("\n"), language))
        else:
            pending.append(token)
    flush()
    return segments


_TAG_OR_TEXT = re.compile(r"(<[^>]*>)")
_CITATION = re.compile(r"\[(\d{1,4})\]")
#: Inside these, "[2]" is the model's literal text (code, an existing link), not a citation.
_NO_LINK_TAGS = ("a", "code", "pre")


def link_citations(fragment: str, numbers: set[int]) -> str:
    """``fragment`` (HTML) with each "[n]" for a known passage number turned into a
    ``cite:n`` link; numbers no passage has stay text (the model invented them)."""
    if not numbers:
        return fragment
    out: list[str] = []
    depth = 0
    for part in _TAG_OR_TEXT.split(fragment):
        if part.startswith("<"):
            name = part.strip("</>").split()[0].lower() if part.strip("</>") else ""
            if name in _NO_LINK_TAGS and not part.endswith("/>"):
                depth += -1 if part.startswith("</") else 1
            out.append(part)
        elif depth > 0:
            out.append(part)
        else:
            out.append(_CITATION.sub(
                lambda m: (f'<a class="cite" href="cite:{m.group(1)}">[{m.group(1)}]</a>'
                           if int(m.group(1)) in numbers else m.group(0)), part))
    return "".join(out)


def render_html(text: str) -> str:
    """The whole text as one HTML fragment, code blocks highlighted inline."""
    parts: list[str] = []
    for segment in render_segments(text):
        if isinstance(segment, ProseSegment):
            parts.append(segment.html)
        else:
            parts.append(f"<pre>{highlight(segment.code, segment.language)}</pre>")
    return "\n".join(parts)


@lru_cache(maxsize=4)
def _formatter(style: str) -> Any:
    from pygments.formatters import HtmlFormatter

    # noclasses: Qt rich text understands inline ``style`` spans, not stylesheets with classes.
    return HtmlFormatter(nowrap=True, noclasses=True, style=style)


def highlight(code: str, language: str, style: str = "friendly") -> str:
    """``code`` as HTML spans with inline colours (no wrapping element)."""
    from pygments import highlight as pygments_highlight
    from pygments.lexers import TextLexer, get_lexer_by_name
    from pygments.util import ClassNotFound

    try:
        lexer = get_lexer_by_name(language) if language else TextLexer()
    except ClassNotFound:
        lexer = TextLexer()
    return pygments_highlight(code, lexer, _formatter(style)).rstrip("\n")


def escape_code(code: str) -> str:
    """Plain code as HTML (for the unhighlighted live view of a streaming code block)."""
    return html.escape(code)


# --- streaming -----------------------------------------------------------------------------
@dataclass(frozen=True)
class FenceOpen:
    """An opening code fence line found in a text."""

    start: int        # index of the fence line's first character
    body_start: int   # index just after the fence line's newline
    marker: str       # the run of backticks or tildes
    language: str


def find_fence_open(text: str, start: int = 0) -> FenceOpen | None:
    """The first complete (newline-terminated) opening fence line at or after ``start``."""
    pos = start
    while pos < len(text):
        end = text.find("\n", pos)
        if end < 0:
            return None
        match = _FENCE_RE.match(text, pos, end)
        if match:
            return FenceOpen(pos, end + 1, match.group(1), match.group(2).strip().split(" ")[0])
        pos = end + 1
    return None


def find_fence_close(text: str, start: int, marker: str) -> tuple[int, int] | None:
    """``(line_start, line_end)`` of the line closing a fence opened with ``marker``.

    ``line_end`` is after the newline, or the end of text when the closing line is the last.
    Only a newline-terminated line counts, unless ``final`` callers pass the whole text.
    """
    char, length = marker[0], len(marker)
    pos = start
    while pos < len(text):
        end = text.find("\n", pos)
        if end < 0:
            return None
        line = text[pos:end].strip()
        if len(line) >= length and line == char * len(line):
            return pos, end + 1
        pos = end + 1
    return None


def stable_split(text: str, min_chunk: int) -> int:
    """How much of prose ``text`` (no open fence) can be committed once it exceeds ``min_chunk``.

    Returns an index just after a blank line (a paragraph boundary), else after the last
    newline, or 0 when nothing should be committed yet. Committing only in chunks of at
    least ``min_chunk`` characters keeps the number of widgets in a long answer small.
    """
    if len(text) < min_chunk:
        return 0
    cut = text.rfind("\n\n")
    if cut >= 0:
        return cut + 2
    cut = text.rfind("\n")
    return cut + 1 if cut >= min_chunk // 2 else 0
