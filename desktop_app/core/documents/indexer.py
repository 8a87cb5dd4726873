"""Bringing a collection's index up to date with its folders, incrementally.

A sync walks the collection's folders and compares each file's size and modification time
with the index: unchanged files are not opened; a file that vanished while one with the
same inode, size and time appeared was renamed (its row moves, nothing is read again);
changed and new files are converted, chunked and embedded, one transaction per file so a
cancelled or killed sync keeps every file it finished. A file that cannot be read gets its
error stored beside it and the sync goes on. Blocking: run it in a worker thread.
"""

from __future__ import annotations

import os
import stat
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from desktop_app.core.documents.chunking import chunk_sections, embedding_text
from desktop_app.core.documents.convert import ConversionError, convert, is_supported
from desktop_app.core.documents.index_db import IndexDatabase

if TYPE_CHECKING:  # numpy loads with the first index or search, not with the window
    import numpy as np


class EmbedderLike(Protocol):
    model_id: str

    def embed(self, texts: list[str]) -> np.ndarray: ...


class SyncCancelledError(Exception):
    """The sync was cancelled; everything finished before stays indexed."""


@dataclass
class SyncProgress:
    collection: str
    total: int = 0
    done: int = 0
    current: str = ""
    phase: str = "scanning"  # scanning | indexing | embedding | done


@dataclass
class SyncReport:
    collection: str
    indexed: int = 0
    unchanged: int = 0
    renamed: int = 0
    removed: int = 0
    failed: dict[str, str] = field(default_factory=dict)
    pages: int = 0
    chunks: int = 0
    seconds: float = 0.0


@dataclass(frozen=True)
class _Seen:
    path: str
    source_id: int
    size: int
    mtime: float
    inode: int


ProgressFn = Callable[[SyncProgress], None]
_SKIPPED_DIRS = frozenset({"__pycache__", "node_modules"})


def _regular_inside(path: Path) -> bool:
    """``path`` is a regular file itself, not a symlink (to a host file outside the
    folder, say) nor a FIFO, socket or device that would block or leak when opened."""
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


def _printable_name(name: str) -> bool:
    """The file name is valid Unicode (a name that is not valid UTF-8 reaches Python with
    surrogates, which SQLite and the window cannot store or show)."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def walk_source(source: Path) -> tuple[list[Path], list[str]]:
    """Supported files under ``source`` (a file or folder) and the folders it could not
    open (hidden folders and files are left out). Inside a folder only regular files count:
    a symlink is never followed out of the folder the user added, and a FIFO or device is
    never opened."""
    if source.is_file():
        # A file the user picked themselves: a link to it means the file it points to.
        return ([source.resolve()] if is_supported(source) else []), []
    if not source.is_dir():
        return [], [f"{source}: not found"]
    files: list[Path] = []
    problems: list[str] = []

    def on_error(exc: OSError) -> None:
        problems.append(f"{exc.filename}: {exc.strerror or exc}")

    for root, dirs, names in os.walk(source, onerror=on_error):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in _SKIPPED_DIRS)
        for name in sorted(names):
            path = Path(root) / name
            if name.startswith(".") or not is_supported(path):
                continue
            if not _printable_name(name):
                problems.append(f"{os.fsencode(path)!r}: the file name is not valid UTF-8; "
                                "rename the file to index it")
            elif _regular_inside(path):
                files.append(path)
    return files, problems


class Indexer:
    def __init__(self, db: IndexDatabase, embedder: EmbedderLike) -> None:
        self._db = db
        self._embedder = embedder

    def sync(self, collection: str, *, progress: ProgressFn | None = None,
             cancel: threading.Event | None = None, force: bool = False) -> SyncReport:
        """Index what changed in ``collection``; ``force`` reads every file again."""
        started = time.monotonic()
        report = SyncReport(collection=collection)
        state = SyncProgress(collection=collection)
        notify = progress or (lambda _p: None)
        collection_id, sources = self._sources(collection)
        self._reembed_if_model_changed(state, notify, cancel)
        seen: dict[str, _Seen] = {}
        for source_id, source in sources:
            files, problems = walk_source(Path(source))
            with self._db.write() as conn:
                conn.execute("UPDATE sources SET error = ? WHERE id = ?",
                             ("; ".join(problems) or None, source_id))
            for problem in problems:
                report.failed[problem.split(":", 1)[0]] = problem.split(":", 1)[1].strip()
            for path in files:
                try:
                    st = path.stat()
                except OSError as exc:
                    report.failed[str(path)] = exc.strerror or str(exc)
                    continue
                seen.setdefault(str(path), _Seen(str(path), source_id, st.st_size,
                                                 st.st_mtime, st.st_ino))
        with self._db.read() as conn:
            known = {row[0]: row[1:] for row in conn.execute(
                "SELECT path, id, size, mtime, inode, status FROM files "
                "WHERE collection_id = ?", (collection_id,))}
        to_index = []
        for key, file in seen.items():
            row = known.get(key)
            if row and not force and row[1] == file.size and row[2] == file.mtime:
                report.unchanged += 1
            else:
                to_index.append(file)
        gone = {key: row for key, row in known.items() if key not in seen}
        self._apply_renames(gone, to_index, report)
        with self._db.write() as conn:
            for row in gone.values():
                conn.execute("DELETE FROM files WHERE id = ?", (row[0],))
                report.removed += 1
        state.phase, state.total = "indexing", len(to_index)
        notify(state)
        for file in to_index:
            if cancel is not None and cancel.is_set():
                raise SyncCancelledError(f"Indexing of '{collection}' was cancelled; "
                                         f"{report.indexed} file(s) were indexed before.")
            state.current = file.path
            notify(state)
            self._index_file(collection_id, file, report)
            state.done += 1
            notify(state)
        state.phase, state.current = "done", ""
        notify(state)
        report.seconds = time.monotonic() - started
        return report

    def _sources(self, collection: str) -> tuple[int, list[tuple[int, str]]]:
        with self._db.read() as conn:
            row = conn.execute("SELECT id FROM collections WHERE name = ?",
                               (collection,)).fetchone()
            if row is None:
                raise KeyError(collection)
            sources = conn.execute("SELECT id, path FROM sources WHERE collection_id = ? "
                                   "ORDER BY id", (row[0],)).fetchall()
        return row[0], [(s[0], s[1]) for s in sources]

    def _apply_renames(self, gone: dict[str, tuple[Any, ...]], to_index: list[_Seen],
                       report: SyncReport) -> None:
        by_identity = {(row[3], row[1], row[2]): path for path, row in gone.items()}
        for file in list(to_index):
            old = by_identity.pop((file.inode, file.size, file.mtime), None)
            if old is None:
                continue
            with self._db.write() as conn:
                conn.execute("UPDATE files SET path = ?, source_id = ? WHERE id = ?",
                             (file.path, file.source_id, gone[old][0]))
            del gone[old]
            to_index.remove(file)
            report.renamed += 1

    def _index_file(self, collection_id: int, file: _Seen, report: SyncReport) -> None:
        path = Path(file.path)
        chunks = []
        error = None
        try:
            if not _regular_inside(path):  # swapped for a link or a FIFO since the scan
                raise ConversionError("This is no longer a regular file; it was skipped.")
            sections = convert(path)
            chunks = chunk_sections(sections)
            vectors = self._embedder.embed(
                [embedding_text(c.text, c.heading, path.name) for c in chunks])
        except ConversionError as exc:
            error = str(exc)
        except MemoryError:
            error = "Not enough memory to index this file."
        except Exception as exc:  # noqa: BLE001 - one odd file must not stop the others
            error = f"Could not index this file ({exc.__class__.__name__}: {str(exc)[:120]})."
        pages = len({c.page for c in chunks if c.page is not None})
        with self._db.write() as conn:
            conn.execute("DELETE FROM files WHERE collection_id = ? AND path = ?",
                         (collection_id, file.path))
            cursor = conn.execute(
                "INSERT INTO files (collection_id, source_id, path, size, mtime, inode, status,"
                " error, pages, chunks, indexed_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (collection_id, file.source_id, file.path, file.size, file.mtime, file.inode,
                 "error" if error else "indexed", error, pages, 0 if error else len(chunks),
                 time.time()))
            if error is None:
                conn.executemany(
                    "INSERT INTO chunks (file_id, ordinal, page, heading, text, vector) "
                    "VALUES (?, ?, ?, ?, ?, ?)",
                    [(cursor.lastrowid, c.ordinal, c.page, c.heading, c.text,
                      vectors[i].astype("float32").tobytes()) for i, c in enumerate(chunks)])
        if error:
            report.failed[file.path] = error
        else:
            report.indexed += 1
            report.pages += pages
            report.chunks += len(chunks)

    def _reembed_if_model_changed(self, state: SyncProgress, notify: ProgressFn,
                                  cancel: threading.Event | None) -> None:
        """Vectors from another embedding model are not comparable: make them again (the
        text is kept, so no file is read)."""
        current = self._db.meta("embedding_model")
        if current == self._embedder.model_id:
            return
        with self._db.read() as conn:
            rows = conn.execute("SELECT c.id, c.text, c.heading, f.path FROM chunks c "
                                "JOIN files f ON f.id = c.file_id ORDER BY c.id").fetchall()
        state.phase, state.total, state.done = "embedding", len(rows), 0
        notify(state)
        batch = 256
        for start in range(0, len(rows), batch):
            if cancel is not None and cancel.is_set():
                raise SyncCancelledError("Re-embedding was cancelled; it resumes next time.")
            part = rows[start:start + batch]
            vectors = self._embedder.embed(
                [embedding_text(text, heading, Path(path).name) for _, text, heading, path in part])
            with self._db.write() as conn:
                conn.executemany("UPDATE chunks SET vector = ? WHERE id = ?",
                                 [(vectors[i].astype("float32").tobytes(), row[0])
                                  for i, row in enumerate(part)])
            state.done += len(part)
            notify(state)
        with self._db.write() as conn:
            conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('embedding_model', ?)",
                         (self._embedder.model_id,))
