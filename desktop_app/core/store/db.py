"""Opening the conversation database: pragmas, migrations, the single-writer lock.

WAL journaling lets the UI read while the writer thread writes, and a committed
transaction survives the process being killed (``synchronous=NORMAL`` in WAL mode only
risks the last commits on *power loss*, never corruption).

Crash recovery marks answers left in status ``streaming`` as ``interrupted``. That must not
happen to a second app instance's *live* answer, so the writer takes an OS file lock
(``conversations.db.lock``): only the lock holder recovers. The OS drops the lock when a
process dies, even on SIGKILL, so a crashed instance never blocks recovery.
"""

from __future__ import annotations

import os
import sqlite3
import sys
import time
from pathlib import Path
from typing import IO

from desktop_app.core import paths
from desktop_app.core.errors import DamagedDatabaseError, StorageError
from desktop_app.core.store.migrations import migrate

DB_FILENAME = "conversations.db"


def default_db_path() -> Path:
    """``<data dir>/conversations.db``."""
    return paths.data_dir() / DB_FILENAME


def connect(path: Path, *, migrate_schema: bool = True) -> sqlite3.Connection:
    """A configured autocommit connection; runs pending migrations unless told not to."""
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        # isolation_level=None: we issue BEGIN/COMMIT ourselves (the sqlite3 module's
        # implicit transactions would otherwise wrap migrations and streaming flushes).
        conn = sqlite3.connect(path, isolation_level=None, timeout=30.0)
        conn.execute("PRAGMA busy_timeout = 30000")
        mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
        if str(mode).lower() != "wal":
            raise StorageError(f"SQLite refused WAL mode for {path} (got {mode!r}).",
                               hint="Keep the data folder on a local disk, not a network share.")
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute("PRAGMA foreign_keys = ON")
        if migrate_schema:
            migrate(conn)
    except sqlite3.DatabaseError as exc:
        if disk_is_full(path.parent):  # SQLite says "disk I/O error": not a damaged file
            raise StorageError(
                f"The conversation database {path} could not be opened: the disk is full.",
                hint="Free some space on that disk and try again; the database is not "
                     "damaged and nothing in it was lost.") from exc
        raise DamagedDatabaseError(
            f"The conversation database {path} could not be opened: {exc}", path,
            hint="If the file is damaged, move it aside (the app then starts with an empty "
                 "history) and keep the copy for recovery.") from exc
    return conn


def move_aside(path: Path) -> Path:
    """Rename a damaged database (and its -wal and -shm files) to
    ``conversations.db.damaged-<time>``, kept for recovery; returns the new path."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    target = path.with_name(f"{path.name}.damaged-{stamp}")
    for suffix in ("", "-wal", "-shm"):
        part = path.with_name(path.name + suffix)
        if part.exists():
            part.rename(target.with_name(target.name + suffix))
    return target


def disk_is_full(folder: Path, margin: int = 1 << 20) -> bool:
    """Less than ``margin`` bytes are left for this user on ``folder``'s file system."""
    try:
        vfs = os.statvfs(folder)
    except OSError:
        return False
    return vfs.f_bavail * vfs.f_frsize < margin


def integrity_check(conn: sqlite3.Connection) -> str:
    """``"ok"``, or the problems found: SQLite's own check plus the search index's.

    FTS5's ``integrity-check`` with rank 1 also compares the index with the messages table
    (the external content), so an index that drifted from the messages is reported too.
    """
    rows = conn.execute("PRAGMA integrity_check").fetchall()
    result = "\n".join(str(row[0]) for row in rows)
    try:
        conn.execute("INSERT INTO messages_fts (messages_fts, rank) VALUES ('integrity-check', 1)")
    except sqlite3.OperationalError as exc:
        # Old databases before the search index (migration 2) have no such table.
        if "no such table" not in str(exc):
            return f"search index: {exc}" if result == "ok" else f"{result}\nsearch index: {exc}"
    except sqlite3.DatabaseError as exc:
        return f"search index: {exc}" if result == "ok" else f"{result}\nsearch index: {exc}"
    return result


class WriterLock:
    """An exclusive, non-blocking OS lock next to the database (released on process death)."""

    def __init__(self, db_path: Path) -> None:
        self.path = db_path.with_name(db_path.name + ".lock")
        self._file: IO[bytes] | None = None

    def acquire(self) -> bool:
        """True if this process now holds the lock; False if another live process does."""
        if self._file is not None:
            return True
        handle = open(self.path, "a+b")  # noqa: SIM115 - held open as the lock itself
        try:
            if sys.platform == "win32":
                import msvcrt

                handle.seek(0)
                msvcrt.locking(handle.fileno(), msvcrt.LK_NBLCK, 1)
            else:
                import fcntl

                fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            handle.close()
            return False
        self._file = handle
        return True

    def release(self) -> None:
        if self._file is None:
            return
        try:
            if sys.platform == "win32":
                import msvcrt

                self._file.seek(0)
                msvcrt.locking(self._file.fileno(), msvcrt.LK_UNLCK, 1)
            else:
                import fcntl

                fcntl.flock(self._file.fileno(), fcntl.LOCK_UN)
        finally:
            self._file.close()
            self._file = None
