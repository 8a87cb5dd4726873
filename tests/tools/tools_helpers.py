"""Shared helpers for the tool tests: a workspace with files, and a tiny real PDF writer."""

from __future__ import annotations

from pathlib import Path


def make_workspace(root: Path) -> Path:
    """A workspace folder with a few files, a sub-folder and a secret file next to it."""
    ws = root / "workspace"
    (ws / "docs").mkdir(parents=True)
    (ws / "docs" / "plan.md").write_text("# Plan\nBuy milk.\nCall Alice about the budget.\n")
    (ws / "notes.txt").write_text("first line\nsecond line mentions Budget\n")
    (ws / "data.csv").write_text("a,b\n1,2\n")
    secret = root / "outside"
    secret.mkdir()
    (secret / "secret.txt").write_text("TOP-SECRET-CONTENT budget\n")
    return ws


def _pdf_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


def write_pdf(path: Path, pages: list[str]) -> Path:
    """Write a valid PDF (correct xref offsets) with one line of Helvetica text per page."""
    objects: list[bytes] = []
    n = len(pages)
    kids = " ".join(f"{3 + 2 * i} 0 R" for i in range(n))
    font_id = 3 + 2 * n
    objects.append(b"<< /Type /Catalog /Pages 2 0 R >>")
    objects.append(f"<< /Type /Pages /Kids [{kids}] /Count {n} >>".encode())
    for i, text in enumerate(pages):
        content = f"BT /F1 14 Tf 72 720 Td ({_pdf_escape(text)}) Tj ET".encode()
        objects.append(f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents "
                       f"{4 + 2 * i} 0 R /Resources << /Font << /F1 {font_id} 0 R >> >> >>".encode())
        objects.append(b"<< /Length %d >>\nstream\n" % len(content) + content + b"\nendstream")
    objects.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n".encode() + body + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    out += b"".join(f"{o:010d} 00000 n \n".encode() for o in offsets)
    out += f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    path.write_bytes(bytes(out))
    return path
