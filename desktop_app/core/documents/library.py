"""``DocumentLibrary``: collections of the user's files, indexed and searchable.

The one entry to local documents for the CLI, the window and the ``search_documents`` tool.
Blocking methods are meant for worker threads; ``sync_async`` and ``search_async`` run them
there, and cancelling the awaiting task stops a sync between two files.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from desktop_app.core.documents.index_db import CollectionInfo, IndexDatabase
from desktop_app.core.documents.indexer import (
    EmbedderLike,
    Indexer,
    ProgressFn,
    SyncCancelledError,
    SyncReport,
)
from desktop_app.core.documents.search import Hit, Mode, Searcher
from desktop_app.core.errors import DesktopAppError


class CollectionError(DesktopAppError):
    """A collection name or path the user gave is not usable; the message says why."""


@dataclass(frozen=True)
class FileStatus:
    path: str
    status: str  # indexed | error
    error: str | None
    pages: int
    chunks: int


class DocumentLibrary:
    def __init__(self, db_path: Path | None = None, *,
                 embedder: EmbedderLike | None = None) -> None:
        self.db = IndexDatabase(db_path)
        self._embedder = embedder
        self._embedder_lock = threading.Lock()
        self._searcher: Searcher | None = None
        self._sync_lock: asyncio.Lock | None = None

    @property
    def embedder(self) -> EmbedderLike:
        with self._embedder_lock:
            if self._embedder is None:
                from desktop_app.core.documents.embedder import shared_embedder
                self._embedder = shared_embedder()
            return self._embedder

    # --- collections -----------------------------------------------------------------
    def collections(self) -> list[CollectionInfo]:
        return self.db.collections()

    def collection(self, name: str) -> CollectionInfo:
        for info in self.collections():
            if info.name.casefold() == name.casefold():
                return info
        known = ", ".join(c.name for c in self.collections()) or "none yet"
        raise CollectionError(f"There is no collection named '{name}' (collections: {known}).")

    def add_paths(self, collection: str, paths: Sequence[Path]) -> CollectionInfo:
        """Add files or folders to ``collection`` (made if new); index with ``sync``."""
        name = collection.strip()
        if not name:
            raise CollectionError("A collection needs a name.")
        resolved = []
        for path in paths:
            full = Path(path).expanduser().resolve()
            if not full.exists():
                raise CollectionError(f"{path} does not exist.")
            resolved.append(full)
        with self.db.write() as conn:
            conn.execute("INSERT OR IGNORE INTO collections (name, created_at) VALUES (?, ?)",
                         (name, time.time()))
            collection_id = conn.execute("SELECT id FROM collections WHERE name = ?",
                                         (name,)).fetchone()[0]
            conn.executemany("INSERT OR IGNORE INTO sources (collection_id, path) VALUES (?, ?)",
                             [(collection_id, str(p)) for p in resolved])
        return self.collection(name)

    def remove_collection(self, name: str) -> None:
        info = self.collection(name)
        with self.db.write() as conn:
            conn.execute("DELETE FROM collections WHERE id = ?", (info.id,))

    def remove_source(self, name: str, path: Path) -> None:
        info = self.collection(name)
        full = str(Path(path).expanduser().resolve())
        if full not in info.sources:
            raise CollectionError(f"{path} is not part of '{info.name}'.")
        with self.db.write() as conn:
            conn.execute("DELETE FROM sources WHERE collection_id = ? AND path = ?",
                         (info.id, full))

    def files(self, name: str) -> list[FileStatus]:
        info = self.collection(name)
        with self.db.read() as conn:
            rows = conn.execute("SELECT path, status, error, pages, chunks FROM files WHERE "
                                "collection_id = ? ORDER BY path", (info.id,)).fetchall()
            problems = conn.execute("SELECT path, error FROM sources WHERE collection_id = ? "
                                    "AND error IS NOT NULL", (info.id,)).fetchall()
        found = [FileStatus(*row) for row in rows]
        return found + [FileStatus(path, "error", error, 0, 0) for path, error in problems]

    # --- indexing --------------------------------------------------------------------
    def sync(self, name: str, *, progress: ProgressFn | None = None,
             cancel: threading.Event | None = None, force: bool = False) -> SyncReport:
        info = self.collection(name)
        return Indexer(self.db, self.embedder).sync(info.name, progress=progress,
                                                    cancel=cancel, force=force)

    async def sync_async(self, name: str, *, progress: ProgressFn | None = None,
                         force: bool = False) -> SyncReport:
        """``sync`` in a worker thread; cancelling the caller stops it after the current
        file (which is kept) and re-raises ``CancelledError``."""
        cancel = threading.Event()
        task = asyncio.ensure_future(self._locked_sync(name, progress, cancel, force))
        try:
            return await asyncio.shield(task)
        except asyncio.CancelledError:
            cancel.set()
            try:
                await task
            except SyncCancelledError:
                pass
            raise

    async def _locked_sync(self, name: str, progress: ProgressFn | None,
                           cancel: threading.Event, force: bool) -> SyncReport:
        # The watch and a sync the user started never index the same files twice at once.
        if self._sync_lock is None:
            self._sync_lock = asyncio.Lock()
        async with self._sync_lock:
            return await asyncio.to_thread(self.sync, name, progress=progress, cancel=cancel,
                                           force=force)

    # --- search ----------------------------------------------------------------------
    def search(self, query: str, *, collections: Sequence[str] | None = None,
               limit: int = 5, mode: Mode = "fused") -> list[Hit]:
        if collections is not None:
            for name in collections:
                self.collection(name)  # a clear error for a name that does not exist
        if self._searcher is None:
            self._searcher = Searcher(self.db, self.embedder)
        return self._searcher.search(query, collections=collections, limit=limit, mode=mode)

    async def search_async(self, query: str, **options: object) -> list[Hit]:
        return await asyncio.to_thread(self.search, query, **options)  # type: ignore[arg-type]

    def passage(self, chunk_id: int) -> Hit | None:
        with self.db.read() as conn:
            row = conn.execute(
                "SELECT c.id, col.name, f.path, c.page, c.heading, c.text FROM chunks c "
                "JOIN files f ON f.id = c.file_id JOIN collections col "
                "ON col.id = f.collection_id WHERE c.id = ?", (chunk_id,)).fetchone()
        if not row:
            return None
        chunk_id, collection, path, page, heading, text = row
        return Hit(chunk_id, collection, path, page, heading, text, score=0.0)

    def locate(self, collection: str, relative_path: str) -> Path | None:
        """The file a citation's ``collection/relative_path`` names, if it is still there."""
        try:
            info = self.collection(collection)
        except CollectionError:
            return None
        for source in info.sources:
            root = Path(source)
            candidate = root if root.is_file() and root.name == relative_path \
                else root / relative_path
            if candidate.is_file():
                return candidate
        return None

    # --- watching --------------------------------------------------------------------
    async def watch(self, *, interval: float = 30.0,
                    on_report: Callable[[SyncReport], None] | None = None) -> None:
        """Sync every collection now (the rescan on start), then every ``interval``
        seconds while the app runs: a sync of an unchanged folder only stats its files
        (a few ms per thousand). Runs until cancelled; a failing collection is reported
        and retried next round, never ends the watch."""
        import logging

        while True:
            for info in self.collections():
                try:
                    report = await self.sync_async(info.name)
                except CollectionError:
                    continue  # removed meanwhile
                except Exception:  # a watch must survive one bad round
                    logging.getLogger(__name__).warning("Document sync of %s failed",
                                                        info.name, exc_info=True)
                    continue
                if on_report is not None and (report.indexed or report.removed
                                              or report.renamed or report.failed):
                    on_report(report)
            await asyncio.sleep(interval)

    def close(self) -> None:
        self.db.close()
