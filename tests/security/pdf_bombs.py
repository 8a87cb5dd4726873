"""PDFs whose pages' content streams inflate far beyond their size (for the tests)."""

from __future__ import annotations

import zlib


def pdf(pages: int, per_page_bytes: int) -> bytes:
    """A valid PDF of ``pages`` pages, each with 'Hello' and ``per_page_bytes`` of spaces in
    one Flate-compressed content stream (a few hundred bytes per MB in the file)."""
    content = b"BT /F1 12 Tf 72 720 Td (Hello) Tj ET\n" + b" " * per_page_bytes
    stream = zlib.compress(content, 9)
    out = [b"%PDF-1.4\n"]
    offsets = []
    def add(body):
        offsets.append(sum(len(x) for x in out)); out.append(f"{len(offsets)} 0 obj\n".encode() + body + b"\nendobj\n"); return len(offsets)
    font = add(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    page_ids = []
    pages_id = 2 + 2 * pages
    for i in range(pages):
        c = add(b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(stream) + stream + b"\nendstream")
        p = add(b"<< /Type /Page /Parent %d 0 R /MediaBox [0 0 612 792] /Contents %d 0 R /Resources << /Font << /F1 %d 0 R >> >> >>" % (pages_id, c, font))
        page_ids.append(p)
    pid = add(b"<< /Type /Pages /Kids [" + b" ".join(b"%d 0 R" % p for p in page_ids) + b"] /Count %d >>" % pages)
    assert pid == pages_id, (pid, pages_id)
    cat = add(b"<< /Type /Catalog /Pages %d 0 R >>" % pid)
    xref = sum(len(x) for x in out)
    out.append(b"xref\n0 %d\n0000000000 65535 f \n" % (len(offsets)+1) + b"".join(b"%010d 00000 n \n" % o for o in offsets))
    out.append(b"trailer\n<< /Size %d /Root %d 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(offsets)+1, cat, xref))
    return b"".join(out)
