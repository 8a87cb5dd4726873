"""Files to sections: pages, headings, and a clear error for each kind of bad file."""

from __future__ import annotations

import os

import pytest
from doc_files import write_docx, write_encrypted_pdf, write_pdf

from desktop_app.core.documents.convert import ConversionError, convert, markdown_sections


def test_pdf_pages_are_kept(tmp_path) -> None:
    path = write_pdf(tmp_path / "manual.pdf", ["Welcome.", "The warranty lasts 24 months."])
    sections = convert(path)
    assert [(s.page, s.text.strip()) for s in sections] == [
        (1, "Welcome."), (2, "The warranty lasts 24 months.")]


def test_docx_headings_are_kept(tmp_path) -> None:
    path = write_docx(tmp_path / "policy.docx", [
        ("Heading1", "Warranty"), ("", "Two years."), ("Heading2", "Exclusions"),
        ("", "Water damage is not covered.")])
    sections = convert(path)
    assert [(s.heading, s.text) for s in sections] == [
        ("Warranty", "Two years."), ("Warranty › Exclusions", "Water damage is not covered.")]


def test_html_to_sections_without_scripts(tmp_path) -> None:
    path = tmp_path / "page.html"
    path.write_text("<html><head><script>steal()</script></head><body><h1>Setup</h1>"
                    "<p>Run <b>make</b>.</p></body></html>")
    sections = convert(path)
    assert [(s.heading, s.text) for s in sections] == [("Setup", "Run **make**.")]


def test_markdown_heading_paths_and_code_fences() -> None:
    sections = markdown_sections("intro\n# A\ntext a\n## B\n```\n# not a heading\n```\n# C\nc")
    assert [(s.heading, s.text) for s in sections] == [
        ("", "intro"), ("A", "text a"), ("A › B", "```\n# not a heading\n```"), ("C", "c")]


@pytest.mark.parametrize(("name", "content", "message"), [
    ("binary.txt", b"abc\x00\x01\x02def", "binary file"),
    ("broken.pdf", b"%PDF-1.4\n" + b"\x8f garbage " * 100, "damaged or not a PDF"),
    ("empty.pdf", None, "no text layer"),
    ("broken.docx", b"this is not a zip archive", "Could not convert this DOCX"),
])
def test_bad_files_get_a_message(tmp_path, name, content, message) -> None:
    path = tmp_path / name
    if content is None:
        write_pdf(path, [""])
    else:
        path.write_bytes(content)
    with pytest.raises(ConversionError, match=message):
        convert(path)


def test_encrypted_pdf(tmp_path) -> None:
    path = write_encrypted_pdf(tmp_path / "locked.pdf", ["secret"])
    with pytest.raises(ConversionError, match="password-protected"):
        convert(path)


def test_huge_file_is_refused_without_reading_it(tmp_path) -> None:
    path = tmp_path / "huge.txt"
    with path.open("wb") as handle:  # sparse: 200 MB on paper, nothing on disk
        handle.truncate(200 * 1024 * 1024)
    with pytest.raises(ConversionError, match="Too large"):
        convert(path)


def test_text_in_legacy_encoding(tmp_path) -> None:
    path = tmp_path / "old.txt"
    path.write_bytes("Caf\xe9 cr\xe8me".encode("cp1252"))
    assert convert(path)[0].text == "Café crème"
    os.remove(path)
