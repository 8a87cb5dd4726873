"""Files to text sections, each with its place in the file (page or heading).

PDFs are read page by page with pypdf, so a passage can be cited by page; DOCX (through
mammoth) and HTML go through Microsoft's MarkItDown (Markdown out, headings kept); Markdown and
plain text are read as they are. Every failure is a ``ConversionError`` whose message a
person can act on: the indexer records it for that file and goes on with the rest.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: Suffixes the indexer picks up in a folder (others are skipped, not reported).
TEXT_SUFFIXES = frozenset({".txt", ".md", ".markdown", ".rst", ".text", ".log", ".csv"})
MARKITDOWN_SUFFIXES = frozenset({".docx", ".html", ".htm"})
SUPPORTED_SUFFIXES = TEXT_SUFFIXES | MARKITDOWN_SUFFIXES | {".pdf"}
#: Bigger files are refused: converting them would hold the indexer for minutes.
MAX_FILE_BYTES = 100 * 1024 * 1024
#: A DOCX is a zip: what it unpacks to is limited too, before anything is unpacked (a
#: 609 KB zip bomb reached the 8 GB memory cap, and every later file then failed).
MAX_UNPACKED_BYTES = 128 * 1024 * 1024
ZIP_SUFFIXES = frozenset({".docx"})


class ConversionError(Exception):
    """A file that cannot be indexed; ``str()`` is the message shown beside it."""


@dataclass(frozen=True)
class Section:
    """Text from one place of a file: ``page`` (1-based, PDFs) or the ``heading`` above it."""

    text: str
    page: int | None = None
    heading: str = ""


def is_supported(path: Path) -> bool:
    return path.suffix.lower() in SUPPORTED_SUFFIXES


def convert(path: Path) -> list[Section]:
    """The sections of ``path``; raises ``ConversionError``."""
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise ConversionError(f"Cannot read this file: {exc.strerror or exc}.") from exc
    if size > MAX_FILE_BYTES:
        raise ConversionError(f"Too large to index ({size / 2**20:.0f} MB; the limit is "
                              f"{MAX_FILE_BYTES // 2**20} MB). Split it into smaller files.")
    suffix = path.suffix.lower()
    if suffix in ZIP_SUFFIXES:
        _check_unpacked_size(path)
    try:
        if suffix == ".pdf":
            return _pdf(path)
        if suffix in MARKITDOWN_SUFFIXES:
            return markdown_sections(_markitdown(path))
        return markdown_sections(_text(path)) if suffix in {".md", ".markdown"} \
            else [Section(text=_text(path))]
    except ConversionError:
        raise
    except PermissionError as exc:
        raise ConversionError("Permission denied: the app may not read this file.") from exc
    except OSError as exc:
        raise ConversionError(f"Cannot read this file: {exc.strerror or exc}.") from exc


def _check_unpacked_size(path: Path) -> None:
    """Refuse a zip whose members claim more than ``MAX_UNPACKED_BYTES`` (Python's zipfile
    never produces more than a member claims, so the claim bounds the work)."""
    import zipfile

    try:
        with zipfile.ZipFile(path) as archive:
            unpacked = sum(member.file_size for member in archive.infolist())
    except (zipfile.BadZipFile, OSError, ValueError):
        return  # not a zip at all: the converter says what is wrong with it
    if unpacked > MAX_UNPACKED_BYTES:
        raise ConversionError(
            f"Unpacks to {unpacked / 2**20:,.0f} MB (the limit is "
            f"{MAX_UNPACKED_BYTES // 2**20} MB): a damaged file or a zip bomb, not indexed.")


def _text(path: Path) -> str:
    data = path.read_bytes()
    # A NUL byte never occurs in text files; it does in binaries named like them.
    if b"\x00" in data[:65536]:
        raise ConversionError("This is a binary file, not text, despite its name.")
    for encoding in ("utf-8-sig", "cp1252"):
        try:
            return data.decode(encoding)
        except UnicodeDecodeError:
            continue
    return data.decode("latin-1")


#: Limits for one PDF: decompressed content per page and in all, and time.
PDF_MAX_PAGE_CONTENT = 8_000_000
PDF_MAX_CONTENT = 200_000_000
PDF_MAX_SECONDS = 120


@contextlib.contextmanager
def pdf_limits() -> Iterator[None]:
    """pypdf with a page's content capped at a few MB: its own cap (75 MB per stream) let
    a 7 MB file of 100 such pages take over 5 minutes and 3.4 GB (tests/security)."""
    import pypdf

    with pypdf.apply_configuration(zlib_maximum_output_length=PDF_MAX_PAGE_CONTENT,
                                   lzw_maximum_output_length=PDF_MAX_PAGE_CONTENT,
                                   run_length_maximum_output_length=PDF_MAX_PAGE_CONTENT):
        yield


class PdfBudget:
    """Content and time one PDF may cost; ``charge`` each page before reading its text."""

    def __init__(self) -> None:
        self.started = time.monotonic()
        self.content = 0

    def charge(self, page: Any, number: int) -> None:
        data = page.get_contents()
        self.content += len(data.get_data()) if data is not None else 0
        if self.content > PDF_MAX_CONTENT or time.monotonic() - self.started > PDF_MAX_SECONDS:
            raise ConversionError(
                f"This PDF is too large or complex to read (stopped at page {number}: over "
                f"{PDF_MAX_CONTENT // 1_000_000} MB of page content or {PDF_MAX_SECONDS} s). "
                "Split it, or use a text export of it.")


def pdf_failure(exc: Exception) -> str:
    """Why pypdf could not read a file, in a user's words."""
    if type(exc).__name__ == "LimitReachedError":
        return ("This PDF is too large or complex to read (a page holds more than "
                f"{PDF_MAX_PAGE_CONTENT // 1_000_000} MB of content).")
    return f"This PDF is damaged or not a PDF ({exc.__class__.__name__}: {str(exc)[:120]})."


def _pdf(path: Path) -> list[Section]:
    with pdf_limits():
        return _pdf_sections(path)


def _pdf_sections(path: Path) -> list[Section]:
    from pypdf import PdfReader
    from pypdf.errors import PyPdfError

    budget = PdfBudget()
    try:
        reader = PdfReader(path)
        if reader.is_encrypted and not reader.decrypt(""):
            raise ConversionError("This PDF is password-protected. Save an unprotected copy "
                                  "to index it.")
        sections = []
        for number, page in enumerate(reader.pages, start=1):
            budget.charge(page, number)
            text = page.extract_text() or ""
            if text.strip():
                sections.append(Section(text=text, page=number))
    except ConversionError:
        raise
    except (PyPdfError, ValueError, KeyError, TypeError, AttributeError, IndexError,
            RecursionError) as exc:
        # pypdf raises many kinds of error on damaged files, not only its own.
        raise ConversionError(pdf_failure(exc)) from exc
    if not sections:
        raise ConversionError("This PDF has no text layer (a scan?). Run it through OCR to "
                              "index it.")
    return sections


def _markitdown(path: Path) -> str:
    import io

    from markitdown import MarkItDown, StreamInfo

    try:
        if path.suffix.lower() == ".docx":
            # mammoth (which markitdown uses) straight, then markitdown's HTML converter:
            # markitdown's own DOCX pre-pass re-parses document.xml with BeautifulSoup, which
            # (bs4 4.15 with lxml 6) drops the "w:" prefixes, so mammoth finds no body in
            # any DOCX (measured on files Word-like and minimal alike).
            import mammoth

            with path.open("rb") as handle:
                html = mammoth.convert_to_html(handle).value
            return MarkItDown(enable_plugins=False).convert_stream(
                io.BytesIO(html.encode("utf-8")),
                stream_info=StreamInfo(extension=".html", charset="utf-8")).text_content or ""
        return MarkItDown(enable_plugins=False).convert_local(str(path)).text_content or ""
    except Exception as exc:  # any converter failure is this file's error
        detail = str(exc).strip().splitlines()[-1][:160] if str(exc).strip() else ""
        raise ConversionError(f"Could not convert this {path.suffix.lower()[1:].upper()} file"
                              f"{': ' + detail if detail else ''}. Is it damaged?") from exc


def markdown_sections(markdown: str) -> list[Section]:
    """``markdown`` split at its headings; each section keeps its heading path ("A › B")."""
    sections: list[Section] = []
    trail: list[tuple[int, str]] = []
    lines: list[str] = []
    in_fence = False

    def flush() -> None:
        text = "\n".join(lines).strip()
        if text:
            sections.append(Section(text=text, heading=" › ".join(t for _, t in trail)))
        lines.clear()

    for line in markdown.splitlines():
        if line.lstrip().startswith(("```", "~~~")):
            in_fence = not in_fence
        stripped = line.lstrip()
        level = len(stripped) - len(stripped.lstrip("#"))
        if not in_fence and 1 <= level <= 6 and stripped[level:level + 1] == " ":
            flush()
            title = stripped[level:].strip().strip("#").strip()
            trail = [(lvl, t) for lvl, t in trail if lvl < level] + [(level, title)]
            continue
        lines.append(line)
    flush()
    return sections
