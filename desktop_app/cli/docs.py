"""``desktop-app docs``: document collections the assistant searches and cites.

    docs add PATH... [--collection NAME]   add files/folders, index (progress on stderr)
    docs list                              collections, their folders and files
    docs search QUERY [--collection NAME]  ranked passages: path, page or heading, snippet
    docs rm NAME [--path PATH]             remove a collection (or one of its folders)
    docs reindex [NAME] [--full]           pick up changes (or read everything again)
"""

from __future__ import annotations

import argparse
import sys
import threading
from pathlib import Path
from typing import Any

DEFAULT_COLLECTION = "Documents"


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "docs", help="local document collections the assistant can search and cite",
        description="Index your files (PDF, Markdown, text, HTML, DOCX) into "
                    "named collections, search them, and let 'ask --docs NAME' answer from "
                    "them with citations. Nothing leaves the computer.")
    sub = parser.add_subparsers(dest="docs_command", metavar="ACTION", required=True)

    add = sub.add_parser("add", help="add files or folders to a collection and index them")
    add.add_argument("paths", nargs="+", type=Path, metavar="PATH")
    add.add_argument("--collection", "-c", default=DEFAULT_COLLECTION, metavar="NAME",
                     help=f"collection name (default: {DEFAULT_COLLECTION}; made if new)")
    add.set_defaults(func=_add)

    show = sub.add_parser("list", help="collections, their folders, and files that failed")
    show.add_argument("--files", action="store_true", help="list every indexed file")
    show.set_defaults(func=_list)

    find = sub.add_parser("search", help="ranked passages for a query, one a line")
    find.add_argument("query", nargs="+")
    find.add_argument("--collection", "-c", action="append", metavar="NAME",
                      help="only this collection (repeatable; default: all)")
    find.add_argument("--limit", "-n", type=int, default=10, metavar="N")
    find.add_argument("--mode", choices=("fused", "words", "vectors"), default="fused",
                      help="ranking: words and meaning fused (default), or one of them")
    find.set_defaults(func=_search)

    remove = sub.add_parser("rm", help="remove a collection, or one folder/file from it")
    remove.add_argument("collection", metavar="NAME")
    remove.add_argument("--path", type=Path, help="remove only this folder or file")
    remove.set_defaults(func=_remove)

    again = sub.add_parser("reindex", help="pick up changed, added, renamed, deleted files")
    again.add_argument("collection", nargs="?", metavar="NAME", help="default: all")
    again.add_argument("--full", action="store_true",
                       help="read every file again, changed or not")
    again.set_defaults(func=_reindex)


def _library() -> Any:
    from desktop_app.core.documents import DocumentLibrary

    return DocumentLibrary()


def _sync(library: Any, name: str, *, force: bool = False) -> int:
    """Index ``name`` with a progress line on stderr; Ctrl+C stops after the current file."""
    from desktop_app.core.documents import SyncCancelledError

    interactive = sys.stderr.isatty()
    cancel = threading.Event()

    def progress(state: Any) -> None:
        if state.phase == "done" or not state.total:
            return
        current = Path(state.current).name if state.current else ""
        line = f"{state.phase} {state.done}/{state.total} {current}"[:100]
        if interactive:
            print(f"\r\033[K{line}", end="", file=sys.stderr, flush=True)
        elif state.current == "" or state.done == state.total:
            print(line, file=sys.stderr)

    try:
        report = library.sync(name, progress=progress, cancel=cancel, force=force)
    except KeyboardInterrupt:
        cancel.set()
        raise
    except SyncCancelledError as exc:
        print(f"\n{exc}", file=sys.stderr)
        return 130
    if interactive:
        print("\r\033[K", end="", file=sys.stderr)
    print(f"{report.collection}: {report.indexed} indexed ({report.pages} pages, "
          f"{report.chunks} passages), {report.unchanged} unchanged, {report.renamed} renamed, "
          f"{report.removed} removed, {len(report.failed)} failed "
          f"({report.seconds:.1f} s)", file=sys.stderr)
    for path, error in sorted(report.failed.items()):
        print(f"  ✗ {path}: {error}", file=sys.stderr)
    return 0


def _add(args: argparse.Namespace) -> int:
    library = _library()
    try:
        info = library.add_paths(args.collection, args.paths)
        return _sync(library, info.name)
    finally:
        library.close()


def _list(args: argparse.Namespace) -> int:
    library = _library()
    try:
        collections = library.collections()
        if not collections:
            print("No collections yet. Add one: desktop-app docs add ~/Documents "
                  "--collection Home")
            return 0
        for info in collections:
            print(f"{info.name}: {info.indexed} files indexed, {info.chunks} passages"
                  + (f", {info.failed} failed" if info.failed else ""))
            for source in info.sources:
                print(f"  {source}")
            for status in library.files(info.name):
                if status.status == "error":
                    print(f"  ✗ {status.path}: {status.error}")
                elif args.files:
                    pages = f", {status.pages} pages" if status.pages else ""
                    print(f"  ✓ {status.path} ({status.chunks} passages{pages})")
        return 0
    finally:
        library.close()


def _search(args: argparse.Namespace) -> int:
    library = _library()
    try:
        hits = library.search(" ".join(args.query), collections=args.collection,
                              limit=args.limit, mode=args.mode)
        if not hits:
            print("No passage matches.", file=sys.stderr)
            return 1
        for hit in hits:
            where = f"page {hit.page}" if hit.page is not None else (hit.heading or "-")
            snippet = " ".join(hit.text.split())
            snippet = snippet[:160] + ("…" if len(snippet) > 160 else "")
            print(f"{hit.path}\t{where}\t{snippet}")
        return 0
    finally:
        library.close()


def _remove(args: argparse.Namespace) -> int:
    library = _library()
    try:
        if args.path is not None:
            library.remove_source(args.collection, args.path)
            print(f"Removed {args.path} from '{args.collection}'.", file=sys.stderr)
            return _sync(library, args.collection)
        library.remove_collection(args.collection)
        print(f"Removed the collection '{args.collection}' (your files are untouched).",
              file=sys.stderr)
        return 0
    finally:
        library.close()


def _reindex(args: argparse.Namespace) -> int:
    library = _library()
    try:
        names = [args.collection] if args.collection else [c.name for c in library.collections()]
        worst = 0
        for name in names:
            worst = max(worst, _sync(library, library.collection(name).name, force=args.full))
        return worst
    finally:
        library.close()
