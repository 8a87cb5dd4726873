"""PDF decompression bombs (issue 26): a 7 MB file of 100 pages whose content streams each
inflate to 70 MB took over 5 minutes and 3.4 GB to index (pypdf's own cap is 75 MB per
stream). A page may now hold 8 MB of content and a document 200 MB (or 120 s); beyond
that, indexing and the read_document tool stop at once with a clear message."""

from __future__ import annotations

import asyncio
import sys
import threading
import time
from pathlib import Path

import pytest

from desktop_app.core.documents import convert
from desktop_app.core.documents.convert import ConversionError

sys.path.insert(0, str(Path(__file__).parent))
from pdf_bombs import pdf


def _timed(call) -> tuple[object, float]:
    outcome: list[object] = []
    started = time.monotonic()
    worker = threading.Thread(target=lambda: outcome.append(_catch(call)), daemon=True)
    worker.start()
    worker.join(60)
    assert not worker.is_alive(), "still reading after 60 s"
    return outcome[0], time.monotonic() - started


def _catch(call):
    try:
        return call()
    except Exception as exc:  # noqa: BLE001 - the test looks at it
        return exc


def test_a_page_that_inflates_past_the_cap_is_refused_at_once(tmp_path: Path) -> None:
    bomb = tmp_path / "bomb.pdf"
    bomb.write_bytes(pdf(100, 70_000_000))  # 7 MB on disk, 7 GB of content
    error, seconds = _timed(lambda: convert._pdf(bomb))
    assert isinstance(error, ConversionError) and "too large or complex" in str(error)
    assert seconds < 10


def test_many_pages_under_the_page_cap_stop_at_the_document_budget(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(convert, "PDF_MAX_CONTENT", 20_000_000)  # keeps the test short
    bomb = tmp_path / "pages.pdf"
    bomb.write_bytes(pdf(60, 7_000_000))
    error, seconds = _timed(lambda: convert._pdf(bomb))
    assert isinstance(error, ConversionError) and "stopped at page 3" in str(error)
    assert seconds < 30


def test_the_read_document_tool_refuses_a_bomb_too(tmp_path: Path) -> None:
    from desktop_app.core.config.settings import Settings, ToolsSettings
    from desktop_app.core.tools.builtin import default_tools

    (tmp_path / "bomb.pdf").write_bytes(pdf(50, 70_000_000))
    tools = {t.name: t for t in default_tools(Settings(tools=ToolsSettings(
        workspace=str(tmp_path))))}
    tool = tools["read_document"]
    result, seconds = _timed(lambda: asyncio.run(tool.run(tool.validate({"path": "bomb.pdf"}))))
    text = str(result) if isinstance(result, Exception) else (result.error or result.text)
    assert "too large or complex" in text and seconds < 10


def test_an_ordinary_pdf_still_reads(tmp_path: Path) -> None:
    normal = tmp_path / "normal.pdf"
    normal.write_bytes(pdf(3, 1000))
    sections = convert._pdf(normal)
    assert [s.page for s in sections] == [1, 2, 3] and "Hello" in sections[0].text
