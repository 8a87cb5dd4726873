"""A DOCX that unpacks to far more than any document is refused before it is unpacked,
and the files after it are indexed as usual."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from desktop_app.core.documents.convert import MAX_UNPACKED_BYTES, ConversionError, convert


def _bomb(path: Path, size: int) -> Path:
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("[Content_Types].xml", "<Types/>")
        with archive.open("word/document.xml", "w", force_zip64=True) as member:
            block = b"\0" * (1 << 20)
            for _ in range(size >> 20):
                member.write(block)
    return path


def test_a_docx_zip_bomb_is_refused_without_unpacking(tmp_path: Path) -> None:
    bomb = _bomb(tmp_path / "bomb.docx", MAX_UNPACKED_BYTES + (32 << 20))
    assert bomb.stat().st_size < 1 << 20  # under 1 MB on disk
    with pytest.raises(ConversionError, match="zip bomb"):
        convert(bomb)
    text = tmp_path / "after.txt"
    text.write_text("still indexed")
    assert convert(text)[0].text == "still indexed"
