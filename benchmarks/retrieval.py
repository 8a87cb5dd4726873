"""Retrieval quality of local documents: recall@5 and MRR for words only, vectors only and
the fused ranking, on the Python documentation with its own FAQ as the questions.

The corpus is the reStructuredText sources of the Python 3.11 documentation as Debian ships
them (``apt-get install python3.11-doc``; PSF licence): every page except the FAQ, plus one
file per FAQ answer with its question heading removed. The questions are the FAQ's own
headings ("How do I copy a file?"), written by the Python maintainers, not for this code;
the relevant document of each is the answer that followed it. A question is found at rank r
when the r-th distinct file of the ranking is its answer; recall@5 counts r <= 5, MRR
averages 1/r (0 beyond 50 passages).

    .venv/bin/python benchmarks/retrieval.py [--sources DIR] [--work DIR]

``--work`` keeps the corpus and index between runs (indexing is incremental: a second run
only searches).
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from desktop_app.core.documents import DocumentLibrary

DEFAULT_SOURCES = Path("/usr/share/doc/python3.11/html/_sources")
_UNDERLINE = re.compile(r"^([=\-^~*+#\"'`])\1{2,}\s*$")


def faq_entries(text: str) -> list[tuple[str, str]]:
    """(question, answer) for each heading ending in '?' of an FAQ page."""
    lines = text.splitlines()
    headings = [i for i in range(1, len(lines))
                if _UNDERLINE.match(lines[i]) and lines[i - 1].strip()
                and len(lines[i].rstrip()) >= len(lines[i - 1].rstrip())]
    entries = []
    for n, index in enumerate(headings):
        title = lines[index - 1].strip()
        end = headings[n + 1] - 1 if n + 1 < len(headings) else len(lines)
        if title.endswith("?"):
            answer = "\n".join(lines[index + 1:end]).strip()
            if answer:
                entries.append((title, answer))
    return entries


def build_corpus(sources: Path, corpus: Path) -> list[tuple[str, str]]:
    """Write the corpus files; return (question, relevant file path) pairs."""
    questions: list[tuple[str, str]] = []
    seen: set[str] = set()
    for page in sorted(sources.rglob("*.rst.txt")):
        relative = page.relative_to(sources)
        text = page.read_text(encoding="utf-8", errors="replace")
        if relative.parts[0] == "faq":
            for number, (question, answer) in enumerate(faq_entries(text), start=1):
                target = corpus / "faq" / f"{relative.name.split('.')[0]}-{number:03d}.txt"
                target.parent.mkdir(parents=True, exist_ok=True)
                if not target.exists():
                    target.write_text(answer, encoding="utf-8")
                if question not in seen:  # "What is Python?" is asked twice
                    seen.add(question)
                    questions.append((question, str(target.resolve())))
            continue
        target = corpus / relative.with_suffix("")  # library/copy.rst.txt -> .../copy.rst
        target = target.with_suffix(".txt")
        target.parent.mkdir(parents=True, exist_ok=True)
        if not target.exists():
            target.write_text(text, encoding="utf-8")
    return questions


def rank_of(library: DocumentLibrary, question: str, relevant: str, mode: str) -> int | None:
    files: list[str] = []
    for hit in library.search(question, limit=50, mode=mode):  # type: ignore[arg-type]
        if hit.path not in files:
            files.append(hit.path)
    return files.index(relevant) + 1 if relevant in files else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sources", type=Path, default=DEFAULT_SOURCES)
    parser.add_argument("--work", type=Path, default=None)
    args = parser.parse_args()
    if not args.sources.is_dir():
        sys.exit(f"{args.sources} not found: apt-get install python3.11-doc (Debian), or "
                 f"pass --sources with the docs' _sources folder.")
    work = args.work or Path(tempfile.mkdtemp(prefix="retrieval-"))
    corpus = work / "corpus"
    questions = build_corpus(args.sources, corpus)
    library = DocumentLibrary(work / "documents.db")
    library.add_paths("python-docs", [corpus])
    started = time.monotonic()
    report = library.sync("python-docs", progress=_progress)
    print(f"\rindexed {report.indexed} files ({report.chunks} passages) in "
          f"{time.monotonic() - started:.0f} s; unchanged {report.unchanged}; "
          f"failed {len(report.failed)}", file=sys.stderr)
    info = library.collection("python-docs")
    print(f"corpus: {info.files} files, {info.chunks} passages; {len(questions)} questions "
          f"(Python 3.11 FAQ headings)")
    print(f"{'ranking':<10} {'recall@5':>9} {'MRR':>7} {'ms/query':>9}")
    for mode in ("words", "vectors", "fused"):
        ranks = []
        started = time.monotonic()
        for question, relevant in questions:
            ranks.append(rank_of(library, question, relevant, mode))
        per_query = (time.monotonic() - started) / len(questions) * 1000
        recall = sum(1 for r in ranks if r is not None and r <= 5) / len(ranks)
        mrr = sum(1 / r for r in ranks if r is not None) / len(ranks)
        print(f"{mode:<10} {recall:>9.3f} {mrr:>7.3f} {per_query:>9.1f}")
    library.close()


def _progress(state: object) -> None:
    done, total = getattr(state, "done", 0), getattr(state, "total", 0)
    print(f"\r{getattr(state, 'phase', '')} {done}/{total}", end="", file=sys.stderr)


if __name__ == "__main__":
    main()
