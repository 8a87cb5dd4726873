"""The document index: its own SQLite file (``documents.db``) beside the conversations.

Kept apart from ``conversations.db`` so indexing ten thousand files never holds the chat
history's writer, and so the index can be deleted and rebuilt without touching a chat.
Chunks carry their place (file, page, heading), FTS5 indexes their words (Porter stemming:
"copying" finds "copy") and a float32 vector per chunk their meaning. ``meta`` remembers
which embedding model made the vectors and a generation counter that changes with every
write, so a reader's in-memory vector matrix knows when it is stale.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from desktop_app.core import paths

DB_FILENAME = "documents.db"
SCHEMA_VERSION = 1

_SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE collections (
    id          INTEGER PRIMARY KEY,
    name        TEXT NOT NULL UNIQUE COLLATE NOCASE,
    created_at  REAL NOT NULL
);
CREATE TABLE sources (
    id             INTEGER PRIMARY KEY,
    collection_id  INTEGER NOT NULL REFERENCES collections(id) ON DELETE CASCADE,
    path           TEXT NOT NULL,
    error          TEXT,
    UNIQUE (collection_id, path)
);
CREATE TABLE files (
    id             INTEGER PRIMARY KEY,
    collection_id  INTEGER NOT NULL REFERENCES collections(id) ON DELETE CASCADE,
    source_id      INTEGER NOT NULL REFERENCES sources(id) ON DELETE CASCADE,
    path           TEXT NOT NULL,
    size           INTEGER NOT NULL,
    mtime          REAL NOT NULL,
    inode          INTEGER NOT NULL,
    status         TEXT NOT NULL CHECK (status IN ('indexed', 'error')),
    error          TEXT,
    pages          INTEGER NOT NULL DEFAULT 0,
    chunks         INTEGER NOT NULL DEFAULT 0,
    indexed_at     REAL NOT NULL,
    UNIQUE (collection_id, path)
);
CREATE TABLE chunks (
    id        INTEGER PRIMARY KEY,
    file_id   INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
    ordinal   INTEGER NOT NULL,
    page      INTEGER,
    heading   TEXT NOT NULL,
    text      TEXT NOT NULL,
    vector    BLOB NOT NULL
);
CREATE INDEX chunks_by_file ON chunks (file_id, ordinal);
CREATE VIRTUAL TABLE chunks_fts USING fts5(
    text, heading, content='chunks', content_rowid='id',
    tokenize='porter unicode61 remove_diacritics 2'
);
CREATE TRIGGER chunks_fts_insert AFTER INSERT ON chunks BEGIN
    INSERT INTO chunks_fts (rowid, text, heading) VALUES (new.id, new.text, new.heading);
END;
CREATE TRIGGER chunks_fts_delete AFTER DELETE ON chunks BEGIN
    INSERT INTO chunks_fts (chunks_fts, rowid, text, heading)
        VALUES ('delete', old.id, old.text, old.heading);
END;
INSERT INTO meta (key, value) VALUES ('generation', '0');
"""


def default_index_path() -> Path:
    return paths.data_dir() / DB_FILENAME


@dataclass(frozen=True)
class CollectionInfo:
    id: int
    name: str
    sources: list[str]
    files: int
    indexed: int
    failed: int
    chunks: int


class IndexDatabase:
    """Two connections (one writes, one reads; WAL lets them run at once), each behind a
    lock so the indexer's thread and a search from another thread never share one."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or default_index_path()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._write_lock = threading.RLock()
        self._read_lock = threading.RLock()
        self._writer = self._connect()
        self._migrate()
        self._reader = self._connect()

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path, isolation_level=None, timeout=30.0,
                               check_same_thread=False)
        conn.execute("PRAGMA busy_timeout = 30000")
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute("PRAGMA foreign_keys = ON")
        return conn

    def _migrate(self) -> None:
        version = self._writer.execute("PRAGMA user_version").fetchone()[0]
        if version == SCHEMA_VERSION:
            return
        if version > SCHEMA_VERSION:
            raise RuntimeError(f"{self.path} was written by a newer desktop-app.")
        with self.write() as conn:
            for statement in _split_script(_SCHEMA):
                conn.execute(statement)
            conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")

    @contextmanager
    def write(self) -> Iterator[sqlite3.Connection]:
        """One transaction on the writer; bumps the generation when it commits."""
        with self._write_lock:
            conn = self._writer
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
                conn.execute("UPDATE meta SET value = CAST(value AS INTEGER) + 1 "
                             "WHERE key = 'generation'")
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise

    @contextmanager
    def read(self) -> Iterator[sqlite3.Connection]:
        with self._read_lock:
            yield self._reader

    def generation(self) -> int:
        with self.read() as conn:
            return int(conn.execute("SELECT value FROM meta WHERE key = 'generation'")
                       .fetchone()[0])

    def meta(self, key: str) -> str | None:
        with self.read() as conn:
            row = conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def collections(self) -> list[CollectionInfo]:
        with self.read() as conn:
            rows = conn.execute("""
                SELECT c.id, c.name,
                       (SELECT COUNT(*) FROM files f WHERE f.collection_id = c.id),
                       (SELECT COUNT(*) FROM files f WHERE f.collection_id = c.id
                                                      AND f.status = 'indexed'),
                       (SELECT COUNT(*) FROM files f WHERE f.collection_id = c.id
                                                      AND f.status = 'error'),
                       (SELECT COALESCE(SUM(f.chunks), 0) FROM files f
                         WHERE f.collection_id = c.id)
                  FROM collections c ORDER BY c.name COLLATE NOCASE""").fetchall()
            sources = conn.execute("SELECT collection_id, path FROM sources ORDER BY id")\
                .fetchall()
        by_collection: dict[int, list[str]] = {}
        for collection_id, path in sources:
            by_collection.setdefault(collection_id, []).append(path)
        return [CollectionInfo(id=r[0], name=r[1], sources=by_collection.get(r[0], []),
                               files=r[2], indexed=r[3], failed=r[4], chunks=r[5])
                for r in rows]

    def close(self) -> None:
        with self._write_lock, self._read_lock:
            self._writer.close()
            self._reader.close()


def _split_script(script: str) -> list[str]:
    """Statements of ``script`` (triggers contain ';' so sqlite3.complete_statement decides)."""
    statements, current = [], ""
    for line in script.splitlines(keepends=True):
        current += line
        if sqlite3.complete_statement(current):
            statements.append(current.strip())
            current = ""
    return [s for s in statements if s]
