"""``read_document``: text of a .txt, .md or .pdf file in the workspace, by page range.

PDFs are read with pypdf (pure Python, no system libraries). Page ranges are 1-based
("3", "2-5", "1,4-6"); the returned text is cut to ``max_chars`` with a note saying how to
continue, so a 300-page PDF never floods the model's context.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

from desktop_app.core.errors import ToolArgumentError, ToolError
from desktop_app.core.tools.base import Tool, ToolResult
from desktop_app.core.tools.sandbox import MAX_READ_BYTES, Workspace

TEXT_SUFFIXES = {".txt", ".md", ".markdown", ".text", ".rst", ".csv", ".log"}
DEFAULT_MAX_CHARS = 20_000
#: PDFs bigger than this are refused: parsing them would stall the assistant.
MAX_PDF_BYTES = 100_000_000


def parse_pages(spec: str, count: int) -> list[int]:
    """0-based page indexes for a 1-based range text like "1,3-5"; clear errors otherwise."""
    pages: list[int] = []
    for part in (p.strip() for p in spec.split(",")):
        if not part:
            continue
        first, dash, last = part.partition("-")
        try:
            start = int(first)
            end = int(last) if dash and last.strip() else (count if dash else start)
        except ValueError:
            raise ToolArgumentError(f"'{part}' is not a page range.",
                                    hint="Use page numbers like '2', '2-5' or '1,4-6'.") from None
        if start < 1 or end < start:
            raise ToolArgumentError(f"'{part}' is not a valid page range (pages start at 1).")
        if start > count:
            raise ToolArgumentError(f"Page {start} does not exist; the document has {count} "
                                    f"page{'s' if count != 1 else ''}.")
        pages.extend(i for i in range(start - 1, min(end, count)) if i not in pages)
    if not pages:
        raise ToolArgumentError("The page range is empty.", hint="Use e.g. '1-3'.")
    return pages


def _read_pdf(name: str, data: bytes, pages_spec: str | None) -> tuple[str, str]:
    """Text of the PDF in ``data`` (read through the workspace's race-free opener)."""
    import io

    from pypdf import PdfReader
    from pypdf.errors import PyPdfError

    from desktop_app.core.documents.convert import (
        ConversionError,
        PdfBudget,
        pdf_failure,
        pdf_limits,
    )

    budget = PdfBudget()
    try:
        with pdf_limits():
            reader = PdfReader(io.BytesIO(data))
            if reader.is_encrypted and not reader.decrypt(""):
                raise ToolError(f"'{name}' is password-protected.",
                                hint="Save an unprotected copy in the workspace.")
            count = len(reader.pages)
            indexes = parse_pages(pages_spec, count) if pages_spec else list(range(count))
            parts = []
            for i in indexes:
                budget.charge(reader.pages[i], i + 1)
                text = (reader.pages[i].extract_text() or "").strip()
                parts.append(f"--- Page {i + 1} of {count} ---\n"
                             f"{text or '(no text on this page)'}")
    except ConversionError as exc:
        raise ToolError(f"'{name}': {exc}") from exc
    except (PyPdfError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise ToolError(f"'{name}' could not be read as a PDF: {pdf_failure(exc)}",
                        hint="The file may be damaged or not a PDF.") from exc
    label = f"pages {pages_spec}" if pages_spec else f"all {count} pages"
    return "\n\n".join(parts), label


class ReadDocumentTool(Tool):
    """Reads text, Markdown and PDF documents inside the workspace."""

    name = "read_document"
    reads_private = True
    description = "Read a .txt, .md or .pdf in the workspace (PDF pages like '2-5')"
    parameters: Mapping[str, Any] = {
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "Path relative to the workspace."},
            "pages": {"type": "string", "description": "PDF pages, 1-based: '3', '2-5', '1,4-6'."},
            "max_chars": {"type": "integer", "minimum": 100, "maximum": 100_000,
                          "default": DEFAULT_MAX_CHARS},
            "offset": {"type": "integer", "minimum": 0, "default": 0,
                       "description": "Character to start at, to continue a long document."},
        },
        "required": ["path"],
        "additionalProperties": False,
    }

    def __init__(self, workspace: Workspace) -> None:
        self.workspace = workspace

    async def run(self, args: dict[str, Any]) -> ToolResult:
        return await asyncio.to_thread(self._read, args)

    def _read(self, args: dict[str, Any]) -> ToolResult:
        rel = args["path"]
        path = self.workspace.resolve(rel)
        if path.is_dir():
            raise ToolError(f"'{rel}' is a folder.", hint="Use list_files to see its documents.")
        suffix = path.suffix.lower()
        pages = args.get("pages")
        if suffix == ".pdf":
            data, cut = self.workspace.read_bytes(rel, max_bytes=MAX_PDF_BYTES)
            if cut:
                raise ToolError(f"The PDF is larger than {MAX_PDF_BYTES // 1_000_000} MB.",
                                hint="Split it or extract the pages you need first.")
            text, label = _read_pdf(path.name, data, pages)
        elif suffix in TEXT_SUFFIXES:
            if pages:
                raise ToolArgumentError("Page ranges only apply to PDF files.",
                                        hint="Use offset and max_chars for text files.")
            text, cut = self.workspace.read_text(rel, max_bytes=MAX_READ_BYTES)
            label = "the first 2 MB" if cut else "the whole file"
        else:
            raise ToolArgumentError(
                f"'{rel}' is a {suffix or 'suffix-less'} file; read_document reads .txt, .md "
                f"and .pdf.", hint="Use read_file for other text files.")
        offset = int(args.get("offset", 0))
        limit = int(args.get("max_chars", DEFAULT_MAX_CHARS))
        part = text[offset: offset + limit]
        header = f"[{self.workspace.relative(path)}, {label}, {len(text):,} characters]\n"
        if offset + limit < len(text):
            part += (f"\n\n[Cut at character {offset + limit:,} of {len(text):,}; call "
                     f"read_document with offset={offset + limit} for more.]")
        return ToolResult(text=header + part)
