"""Document reader: .txt/.md/.pdf inside the workspace, page ranges, length limits, errors."""

from __future__ import annotations

from pathlib import Path

import pytest
from tools_helpers import make_workspace, write_pdf

from desktop_app.core.errors import SandboxViolationError, ToolArgumentError, ToolError
from desktop_app.core.tools.builtin.documents import ReadDocumentTool, parse_pages
from desktop_app.core.tools.sandbox import Workspace

pytestmark = pytest.mark.anyio


@pytest.fixture
def tool(tmp_path: Path) -> ReadDocumentTool:
    ws = make_workspace(tmp_path)
    write_pdf(ws / "report.pdf", [f"Page number {i} says hello" for i in range(1, 6)])
    return ReadDocumentTool(Workspace(ws))


async def test_reads_every_pdf_page_by_default(tool: ReadDocumentTool) -> None:
    result = await tool.run({"path": "report.pdf"})
    assert "all 5 pages" in result.text
    for i in range(1, 6):
        assert f"--- Page {i} of 5 ---\nPage number {i} says hello" in result.text


async def test_reads_a_page_range(tool: ReadDocumentTool) -> None:
    result = await tool.run({"path": "report.pdf", "pages": "2-3,5"})
    assert "Page number 2" in result.text and "Page number 3" in result.text
    assert "Page number 5" in result.text
    assert "Page number 1 " not in result.text and "Page number 4" not in result.text


async def test_page_beyond_the_end_is_a_clear_error(tool: ReadDocumentTool) -> None:
    with pytest.raises(ToolArgumentError, match="Page 9 does not exist; the document has 5 pages"):
        await tool.run({"path": "report.pdf", "pages": "9"})


@pytest.mark.parametrize(("spec", "expected"), [("1", [0]), ("2-4", [1, 2, 3]), ("4-", [3, 4]),
                                                ("1,1,2", [0, 1]), ("3-9", [2, 3, 4])])
def test_parse_pages(spec: str, expected: list[int]) -> None:
    assert parse_pages(spec, 5) == expected


@pytest.mark.parametrize("spec", ["x", "0", "3-1", ",", "1-a"])
def test_parse_pages_rejects_nonsense(spec: str) -> None:
    with pytest.raises(ToolArgumentError):
        parse_pages(spec, 5)


async def test_reads_markdown_and_text(tool: ReadDocumentTool) -> None:
    result = await tool.run({"path": "docs/plan.md"})
    assert "# Plan\nBuy milk." in result.text and "docs/plan.md" in result.text


async def test_long_text_is_cut_with_a_continuation_hint(tool: ReadDocumentTool) -> None:
    (tool.workspace.root / "long.txt").write_text("abcdefghij" * 100)
    result = await tool.run({"path": "long.txt", "max_chars": 100})
    assert "Cut at character 100 of 1,000" in result.text and "offset=100" in result.text
    more = await tool.run({"path": "long.txt", "offset": 990, "max_chars": 100})
    assert more.text.endswith("abcdefghij")


async def test_page_range_on_text_file_is_refused(tool: ReadDocumentTool) -> None:
    with pytest.raises(ToolArgumentError, match="only apply to PDF"):
        await tool.run({"path": "notes.txt", "pages": "1"})


async def test_unsupported_type_is_refused(tool: ReadDocumentTool) -> None:
    (tool.workspace.root / "image.png").write_bytes(b"\x89PNG")
    with pytest.raises(ToolArgumentError, match="reads .txt, .md and .pdf"):
        await tool.run({"path": "image.png"})


async def test_broken_pdf_is_a_clear_error(tool: ReadDocumentTool) -> None:
    (tool.workspace.root / "broken.pdf").write_bytes(b"%PDF-1.4\nthis is not really a pdf")
    with pytest.raises(ToolError, match="could not be read as a PDF"):
        await tool.run({"path": "broken.pdf"})


async def test_documents_outside_the_workspace_are_refused(tool: ReadDocumentTool,
                                                           tmp_path: Path) -> None:
    write_pdf(tmp_path / "outside" / "private.pdf", ["private"])
    with pytest.raises(SandboxViolationError):
        await tool.run({"path": "../outside/private.pdf"})
