"""Local documents at scale: indexing throughput and query latency at 1,000 and 10,000
documents, and the cost of a sync that finds nothing changed.

The documents are paragraphs of the Python 3.11 documentation (``apt-get install
python3.11-doc``), one paragraph of at least 40 words per file, in folders of 500; the
queries are the documentation's FAQ questions. Latency is measured in one process after the
first query (which loads the vector matrix; reported apart as "first query"), as a person
sees it in the app: embedding the query, both rankings, fusion and reading the passages.

    .venv/bin/python benchmarks/documents_scale.py [--sizes 1000 10000] [--work DIR]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from retrieval import DEFAULT_SOURCES, faq_entries

from desktop_app.core.documents import DocumentLibrary


def paragraphs(sources: Path) -> list[str]:
    found = []
    for page in sorted(sources.rglob("*.rst.txt")):
        if page.relative_to(sources).parts[0] == "faq":
            continue
        for block in page.read_text(encoding="utf-8", errors="replace").split("\n\n"):
            words = block.split()
            if len(words) >= 40 and not block.lstrip().startswith(".."):
                found.append(" ".join(words))
    return found


def questions(sources: Path) -> list[str]:
    out = []
    for page in sorted((sources / "faq").glob("*.rst.txt")):
        out.extend(q for q, _ in faq_entries(page.read_text(encoding="utf-8")))
    return out


def write_documents(folder: Path, texts: list[str], count: int) -> None:
    for index in range(count):
        target = folder / f"part{index // 500:03d}" / f"doc{index:05d}.txt"
        if not target.exists():
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(texts[index % len(texts)], encoding="utf-8")


def measure(work: Path, size: int, texts: list[str], queries: list[str]) -> None:
    folder = work / f"docs-{size}"
    write_documents(folder, texts, size)
    library = DocumentLibrary(work / f"index-{size}.db")
    library.add_paths("scale", [folder])
    started = time.monotonic()
    report = library.sync("scale")
    seconds = time.monotonic() - started
    info = library.collection("scale")
    if report.indexed:
        print(f"{size:>6} docs: indexed {report.indexed} in {seconds:.0f} s = "
              f"{report.indexed / seconds:.1f} docs/s, {report.chunks / seconds:.1f} "
              f"passages/s ({info.chunks} passages)")
    started = time.monotonic()
    again = library.sync("scale")
    print(f"{size:>6} docs: a sync with nothing changed took "
          f"{(time.monotonic() - started) * 1000:.0f} ms ({again.unchanged} files checked)")
    started = time.monotonic()
    library.search(queries[0])
    print(f"{size:>6} docs: first query {(time.monotonic() - started) * 1000:.0f} ms "
          f"(loads the vectors)")
    for mode in ("fused", "words", "vectors"):
        times = []
        for query in queries:
            started = time.perf_counter()
            library.search(query, mode=mode)  # type: ignore[arg-type]
            times.append((time.perf_counter() - started) * 1000)
        times.sort()
        print(f"{size:>6} docs: {mode:<7} query median {statistics.median(times):.1f} ms, "
              f"p95 {times[int(len(times) * 0.95) - 1]:.1f} ms, max {times[-1]:.1f} ms "
              f"({len(times)} queries)")
    library.close()


def pdf_throughput(work: Path, texts: list[str], pages: int = 200) -> None:
    """Pages per second for one long PDF (five paragraphs a page, ~340 words)."""
    import textwrap

    sys.path.insert(0, str(ROOT / "tests" / "documents"))
    from doc_files import write_pdf  # a real PDF with a text layer, written byte by byte

    lines = []
    for index in range(pages):
        text = " ".join(texts[index * 5:(index + 1) * 5])
        lines.append("\n".join(textwrap.wrap(
            text.encode("latin-1", "replace").decode("latin-1"), 95)))
    folder = work / "pdf"
    folder.mkdir(parents=True, exist_ok=True)
    write_pdf(folder / "book.pdf", lines)
    library = DocumentLibrary(work / "index-pdf.db")
    library.add_paths("pdf", [folder])
    started = time.monotonic()
    report = library.sync("pdf", force=True)
    seconds = time.monotonic() - started
    print(f"a {pages}-page PDF: {seconds:.1f} s = {pages / seconds:.1f} pages/s "
          f"({report.chunks} passages)")
    library.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sources", type=Path, default=DEFAULT_SOURCES)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--work", type=Path, default=None)
    args = parser.parse_args()
    if not args.sources.is_dir():
        sys.exit(f"{args.sources} not found: apt-get install python3.11-doc (Debian)")
    work = args.work or Path(tempfile.mkdtemp(prefix="docs-scale-"))
    texts = paragraphs(args.sources)
    queries = questions(args.sources)
    print(f"{len(texts)} distinct paragraphs; {len(queries)} queries")
    pdf_throughput(work, texts)
    for size in args.sizes:
        measure(work, size, texts, queries)


if __name__ == "__main__":
    main()
