"""Keeping the database healthy: its integrity check, rebuilding the search index, an
online backup, and answers a crash left half-written.

A mixin of ``ConversationStore`` (it uses the store's ``conn``), kept in its own module so
each file stays one concept.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from desktop_app.core.errors import StorageError
from desktop_app.core.store.db import integrity_check


class MaintenanceMixin:
    """Integrity, index rebuild, backup, crash recovery (needs ``conn``)."""

    conn: sqlite3.Connection

    def integrity_check(self) -> str:
        """``"ok"`` or what is damaged (database pages, or the search index)."""
        return integrity_check(self.conn)

    def rebuild_search_index(self) -> None:
        """Rebuild the full-text index from the messages (repairs a damaged index)."""
        self.conn.execute("INSERT INTO messages_fts (messages_fts) VALUES ('rebuild')")

    def backup_to(self, target: Path) -> Path:
        """Write a consistent copy of the whole database to ``target`` (safe while in use).

        Uses SQLite's online backup, so a run streaming at the same time is copied either
        before or after a write, never half-way.
        """
        target = Path(target)
        if target.exists():
            raise StorageError(f"{target} already exists.", hint="Choose a new file name.")
        target.parent.mkdir(parents=True, exist_ok=True)
        copy = sqlite3.connect(target)
        try:
            self.conn.backup(copy)
            result = copy.execute("PRAGMA integrity_check").fetchone()[0]
        finally:
            copy.close()
        if result != "ok":
            raise StorageError(f"The backup {target} failed its integrity check: {result}")
        return target

    def recover_interrupted(self) -> int:
        """Mark answers left ``streaming`` by a crash as ``interrupted``; returns how many."""
        cur = self.conn.execute(
            "UPDATE messages SET status = 'interrupted' WHERE status = 'streaming'")
        return cur.rowcount
