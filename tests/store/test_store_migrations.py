"""Schema migrations: a fresh database, an older database built by hand, failures."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from desktop_app.core.errors import StorageError
from desktop_app.core.store import migrations
from desktop_app.core.store.conversation_store import ConversationStore
from desktop_app.core.store.migrations import MIGRATIONS, latest_version

#: The schema as release 1 wrote it, copied by hand (not generated from the migration code,
#: so a later edit of migration 1 cannot make this test pass by accident).
V1_SCHEMA = """
CREATE TABLE conversations (
    id TEXT PRIMARY KEY, title TEXT NOT NULL DEFAULT '', model TEXT,
    mode TEXT NOT NULL DEFAULT 'react' CHECK (mode IN ('react', 'dag')),
    created_at REAL NOT NULL, updated_at REAL NOT NULL,
    pinned INTEGER NOT NULL DEFAULT 0, archived INTEGER NOT NULL DEFAULT 0);
CREATE TABLE messages (
    id INTEGER PRIMARY KEY,
    conversation_id TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
    role TEXT NOT NULL CHECK (role IN ('system','user','assistant','tool')),
    content TEXT NOT NULL DEFAULT '', reasoning TEXT, model TEXT,
    prompt_tokens INTEGER, completion_tokens INTEGER, ttft REAL, elapsed REAL,
    tokens_per_second REAL,
    status TEXT NOT NULL DEFAULT 'complete'
        CHECK (status IN ('complete','streaming','interrupted','error')),
    error TEXT, pinned INTEGER NOT NULL DEFAULT 0, tool_calls TEXT, tool_call_id TEXT,
    name TEXT, created_at REAL NOT NULL);
CREATE INDEX messages_by_conversation ON messages (conversation_id, id);
CREATE TABLE tool_steps (
    id INTEGER PRIMARY KEY,
    message_id INTEGER NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
    iteration INTEGER NOT NULL, tool TEXT NOT NULL, args TEXT NOT NULL DEFAULT '{}',
    observation TEXT NOT NULL DEFAULT '', error TEXT, elapsed REAL, created_at REAL NOT NULL);
CREATE TABLE artifacts (
    id INTEGER PRIMARY KEY,
    conversation_id TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
    message_id INTEGER REFERENCES messages(id) ON DELETE CASCADE,
    step_id INTEGER REFERENCES tool_steps(id) ON DELETE CASCADE,
    name TEXT NOT NULL, mime_type TEXT NOT NULL, content TEXT NOT NULL,
    created_at REAL NOT NULL);
PRAGMA user_version = 1;
"""


def _tables(path: Path) -> set[str]:
    conn = sqlite3.connect(path)
    try:
        return {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    finally:
        conn.close()


def test_empty_database_is_created_at_the_latest_version(db_path: Path) -> None:
    store = ConversationStore(db_path)
    try:
        assert store.conn.execute("PRAGMA user_version").fetchone()[0] == latest_version()
        assert store.conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert store.conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1
    finally:
        store.close()
    assert {"conversations", "messages", "tool_steps", "artifacts", "interrupts",
            "messages_fts"} <= _tables(db_path)


def test_version_one_database_is_upgraded_keeping_and_indexing_its_data(db_path: Path) -> None:
    db_path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(db_path)
    conn.executescript(V1_SCHEMA)
    conn.execute("INSERT INTO conversations VALUES ('old1', 'Old chat', 'm', 'react', 1, 2, 0, 0)")
    conn.execute("INSERT INTO messages (conversation_id, role, content, created_at) "
                 "VALUES ('old1', 'user', 'where is the lighthouse of Alexandria', 1)")
    conn.execute("INSERT INTO messages (conversation_id, role, content, status, created_at) "
                 "VALUES ('old1', 'assistant', 'It stood on Pharos island', 'streaming', 2)")
    conn.commit()
    conn.close()

    store = ConversationStore(db_path)
    try:
        assert store.conn.execute("PRAGMA user_version").fetchone()[0] == latest_version()
        conv = store.get_conversation("old1")
        assert (conv.title, conv.deleted_at, conv.message_count) == ("Old chat", None, 2)
        # v2 backfilled the search index from rows that existed before it.
        hits = store.search("lighthouse")
        assert [h.conversation_id for h in hits] == ["old1"]
        # The old answer left 'streaming' by the old version is recovered as interrupted.
        assert store.recovered == 1
        assert store.list_messages("old1")[1].status == "interrupted"
        # v3 features work on the upgraded database.
        store.delete_conversation("old1")
        assert store.list_conversations() == []
        assert store.integrity_check() == "ok"
    finally:
        store.close()


def test_database_from_a_newer_version_is_refused_untouched(db_path: Path) -> None:
    db_path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(db_path)
    conn.execute("PRAGMA user_version = 99")
    conn.close()
    with pytest.raises(StorageError, match="newer desktop-app"):
        ConversationStore(db_path)
    conn = sqlite3.connect(db_path)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == 99
    conn.close()


def test_failing_migration_rolls_back_to_the_previous_version(
        db_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ConversationStore(db_path).close()

    def broken(conn: sqlite3.Connection) -> None:
        conn.execute("CREATE TABLE half_done (x)")
        conn.execute("INSERT INTO no_such_table VALUES (1)")

    next_version = latest_version() + 1
    monkeypatch.setitem(MIGRATIONS, next_version, broken)
    with pytest.raises(StorageError, match=f"version {next_version}"):
        ConversationStore(db_path)
    monkeypatch.delitem(MIGRATIONS, next_version)
    assert "half_done" not in _tables(db_path)
    store = ConversationStore(db_path)
    assert store.conn.execute("PRAGMA user_version").fetchone()[0] == latest_version()
    store.close()


def test_a_migration_number_cannot_be_registered_twice() -> None:
    with pytest.raises(ValueError, match="twice"):
        migrations.migration(1)(lambda conn: None)


def test_damaged_database_file_gives_an_actionable_error(db_path: Path) -> None:
    db_path.parent.mkdir(parents=True, exist_ok=True)
    db_path.write_bytes(b"this is not sqlite at all" * 100)
    with pytest.raises(StorageError, match="move it aside"):
        ConversationStore(db_path)
