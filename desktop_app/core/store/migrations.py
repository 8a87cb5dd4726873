"""Schema migrations for the conversation database: small registered functions.

Each migration upgrades the schema from version N-1 to N and is registered with
``@migration(N)``. The version lives in ``PRAGMA user_version`` (part of the database header,
so it commits atomically with the migration's own statements). Migrations run one per
transaction: a crash in the middle of one leaves the database at the previous version, and
the next start simply runs it again.

Never edit a released migration; add a new one. Tests build an old database by hand and
check it upgrades.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

from desktop_app.core.errors import StorageError

Migration = Callable[[sqlite3.Connection], None]

#: version -> function that upgrades from version-1 to version.
MIGRATIONS: dict[int, Migration] = {}


def migration(version: int) -> Callable[[Migration], Migration]:
    """Register ``fn`` as the upgrade to ``version``."""

    def register(fn: Migration) -> Migration:
        if version in MIGRATIONS:
            raise ValueError(f"migration {version} registered twice")
        MIGRATIONS[version] = fn
        return fn

    return register


def latest_version() -> int:
    """The schema version this code writes."""
    return max(MIGRATIONS)


def run_script(conn: sqlite3.Connection, script: str) -> None:
    """Execute several statements inside the caller's transaction.

    ``Connection.executescript`` would COMMIT first, breaking one-migration-one-transaction,
    so statements are split with ``sqlite3.complete_statement`` (trigger bodies contain ``;``).
    """
    buffer = ""
    for line in script.splitlines(keepends=True):
        buffer += line
        if sqlite3.complete_statement(buffer):
            if buffer.strip():
                conn.execute(buffer)
            buffer = ""
    if buffer.strip():
        raise ValueError(f"incomplete SQL statement in migration: {buffer.strip()[:80]}")


def current_version(conn: sqlite3.Connection) -> int:
    return int(conn.execute("PRAGMA user_version").fetchone()[0])


def migrate(conn: sqlite3.Connection) -> tuple[int, int]:
    """Bring the database to ``latest_version()``; returns (version before, version after).

    The connection must be in autocommit mode (``isolation_level=None``).
    """
    before = current_version(conn)
    target = latest_version()
    if before > target:
        raise StorageError(
            f"The conversation database has schema version {before}, but this desktop-app "
            f"only knows up to version {target}.",
            hint="It was written by a newer desktop-app; update the app to open it.")
    for version in range(before + 1, target + 1):
        conn.execute("BEGIN IMMEDIATE")
        try:
            MIGRATIONS[version](conn)
            conn.execute(f"PRAGMA user_version = {int(version)}")
            conn.execute("COMMIT")
        except BaseException as exc:
            conn.execute("ROLLBACK")
            if isinstance(exc, sqlite3.Error):
                raise StorageError(f"Upgrading the conversation database to version {version} "
                                   f"failed: {exc}",
                                   hint="Nothing was changed; report this with the log.") from exc
            raise
    return before, target


# --- the migrations -------------------------------------------------------------------------

@migration(1)
def _v1_base_tables(conn: sqlite3.Connection) -> None:
    """Conversations, messages (with usage and timings), tool steps, artifacts."""
    run_script(conn, """
        CREATE TABLE conversations (
            id          TEXT PRIMARY KEY,
            title       TEXT NOT NULL DEFAULT '',
            model       TEXT,
            mode        TEXT NOT NULL DEFAULT 'react' CHECK (mode IN ('react', 'dag')),
            created_at  REAL NOT NULL,
            updated_at  REAL NOT NULL,
            pinned      INTEGER NOT NULL DEFAULT 0,
            archived    INTEGER NOT NULL DEFAULT 0
        );
        CREATE TABLE messages (
            id                INTEGER PRIMARY KEY,
            conversation_id   TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
            role              TEXT NOT NULL CHECK (role IN ('system','user','assistant','tool')),
            content           TEXT NOT NULL DEFAULT '',
            reasoning         TEXT,
            model             TEXT,
            prompt_tokens     INTEGER,
            completion_tokens INTEGER,
            ttft              REAL,
            elapsed           REAL,
            tokens_per_second REAL,
            status            TEXT NOT NULL DEFAULT 'complete'
                              CHECK (status IN ('complete','streaming','interrupted','error')),
            error             TEXT,
            pinned            INTEGER NOT NULL DEFAULT 0,
            tool_calls        TEXT,
            tool_call_id      TEXT,
            name              TEXT,
            created_at        REAL NOT NULL
        );
        CREATE INDEX messages_by_conversation ON messages (conversation_id, id);
        CREATE INDEX messages_by_status ON messages (status) WHERE status = 'streaming';
        CREATE TABLE tool_steps (
            id           INTEGER PRIMARY KEY,
            message_id   INTEGER NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
            iteration    INTEGER NOT NULL,
            tool         TEXT NOT NULL,
            args         TEXT NOT NULL DEFAULT '{}',
            observation  TEXT NOT NULL DEFAULT '',
            error        TEXT,
            elapsed      REAL,
            created_at   REAL NOT NULL
        );
        CREATE INDEX tool_steps_by_message ON tool_steps (message_id, id);
        CREATE TABLE artifacts (
            id               INTEGER PRIMARY KEY,
            conversation_id  TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
            message_id       INTEGER REFERENCES messages(id) ON DELETE CASCADE,
            step_id          INTEGER REFERENCES tool_steps(id) ON DELETE CASCADE,
            name             TEXT NOT NULL,
            mime_type        TEXT NOT NULL,
            content          TEXT NOT NULL,
            created_at       REAL NOT NULL
        );
        CREATE INDEX artifacts_by_conversation ON artifacts (conversation_id, id);
    """)


@migration(2)
def _v2_full_text_search(conn: sqlite3.Connection) -> None:
    """FTS5 index over message content, kept in sync by triggers; backfilled from old rows."""
    run_script(conn, """
        CREATE VIRTUAL TABLE messages_fts USING fts5(
            content, content='messages', content_rowid='id',
            tokenize='unicode61 remove_diacritics 2'
        );
        CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages BEGIN
            INSERT INTO messages_fts (rowid, content) VALUES (new.id, new.content);
        END;
        CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages BEGIN
            INSERT INTO messages_fts (messages_fts, rowid, content)
                VALUES ('delete', old.id, old.content);
        END;
        CREATE TRIGGER messages_fts_update AFTER UPDATE OF content ON messages BEGIN
            INSERT INTO messages_fts (messages_fts, rowid, content)
                VALUES ('delete', old.id, old.content);
            INSERT INTO messages_fts (rowid, content) VALUES (new.id, new.content);
        END;
        INSERT INTO messages_fts (messages_fts) VALUES ('rebuild');
    """)


@migration(3)
def _v3_trash_and_interrupts(conn: sqlite3.Connection) -> None:
    """Soft delete (a trash with undo) and the interrupts users send during a run."""
    run_script(conn, """
        ALTER TABLE conversations ADD COLUMN deleted_at REAL;
        CREATE INDEX conversations_by_recency
            ON conversations (deleted_at, archived, pinned DESC, updated_at DESC);
        CREATE TABLE interrupts (
            id               INTEGER PRIMARY KEY,
            conversation_id  TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
            message_id       INTEGER NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
            run_message_id   INTEGER REFERENCES messages(id) ON DELETE SET NULL,
            content          TEXT NOT NULL,
            status           TEXT NOT NULL DEFAULT 'pending'
                             CHECK (status IN ('pending', 'delivered')),
            created_at       REAL NOT NULL
        );
        CREATE INDEX interrupts_by_conversation ON interrupts (conversation_id, id);
    """)


@migration(4)
def _v4_evaluation_runs(conn: sqlite3.Connection) -> None:
    """Evaluation runs (one model, one suite, one mode) and their per-task results."""
    run_script(conn, """
        CREATE TABLE eval_runs (
            id          INTEGER PRIMARY KEY,
            created_at  REAL NOT NULL,
            model       TEXT NOT NULL,
            mode        TEXT NOT NULL,
            suite       TEXT NOT NULL,
            app_version TEXT NOT NULL,
            machine     TEXT NOT NULL,
            options     TEXT NOT NULL DEFAULT '{}',
            passed      INTEGER NOT NULL,
            total       INTEGER NOT NULL,
            summary     TEXT NOT NULL
        );
        CREATE INDEX eval_runs_by_model ON eval_runs (model, created_at);
        CREATE TABLE eval_results (
            run_id      INTEGER NOT NULL REFERENCES eval_runs(id) ON DELETE CASCADE,
            task_id     TEXT NOT NULL,
            category    TEXT NOT NULL,
            passed      INTEGER NOT NULL,
            reason      TEXT NOT NULL,
            tools       TEXT NOT NULL,
            iterations  INTEGER NOT NULL,
            seconds     REAL NOT NULL,
            prompt_tokens     INTEGER NOT NULL,
            completion_tokens INTEGER NOT NULL,
            first_token REAL,
            answer      TEXT NOT NULL,
            PRIMARY KEY (run_id, task_id)
        );
    """)


@migration(5)
def _v5_run_speeds(conn: sqlite3.Connection) -> None:
    """An answer's prompt speed and its number of loop iterations, so a reopened
    conversation's footer says what the live run said."""
    run_script(conn, """
        ALTER TABLE messages ADD COLUMN prompt_tokens_per_second REAL;
        ALTER TABLE messages ADD COLUMN iterations INTEGER;
    """)


@migration(6)
def _v6_model_benchmarks(conn: sqlite3.Connection) -> None:
    """Speed measurements of local models, per model file and machine."""
    run_script(conn, """
        CREATE TABLE model_benchmarks (
            id          INTEGER PRIMARY KEY,
            created_at  REAL NOT NULL,
            model_key   TEXT NOT NULL,
            model_name  TEXT NOT NULL,
            machine     TEXT NOT NULL,
            app_version TEXT NOT NULL,
            results     TEXT NOT NULL
        );
        CREATE INDEX model_benchmarks_by_key ON model_benchmarks (model_key, machine, created_at);
    """)


@migration(7)
def _v7_chat_assistant(conn: sqlite3.Connection) -> None:
    """The assistant a chat uses and the chat's own overrides (JSON: temperature,
    context_size)."""
    run_script(conn, """
        ALTER TABLE conversations ADD COLUMN assistant TEXT;
        ALTER TABLE conversations ADD COLUMN chat_options TEXT NOT NULL DEFAULT '{}';
    """)


@migration(8)
def _v8_branches(conn: sqlite3.Connection) -> None:
    """Versions of a conversation kept by edit and regenerate (``store/branches.py``)."""
    run_script(conn, """
        CREATE TABLE branches (
            id               INTEGER PRIMARY KEY,
            conversation_id  TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
            fork_index       INTEGER NOT NULL,
            variant          INTEGER NOT NULL,
            created_at       REAL NOT NULL,
            payload          TEXT NOT NULL
        );
        CREATE INDEX branches_by_fork ON branches (conversation_id, fork_index, variant);
        ALTER TABLE conversations ADD COLUMN branch_state TEXT NOT NULL DEFAULT '{}';
    """)


@migration(9)
def _v9_answer_cut(conn: sqlite3.Connection) -> None:
    """Why an answer's text was cut before the model ended it ("length", "repetition"),
    so a reopened conversation says it as the live run did."""
    run_script(conn, "ALTER TABLE messages ADD COLUMN cut TEXT;")


@migration(10)
def _v10_dag_plan(conn: sqlite3.Connection) -> None:
    """A DAG answer's plan, step outcomes and checks (JSON events), so a reopened chat
    shows the plan card and the check lines the live run showed."""
    run_script(conn, "ALTER TABLE messages ADD COLUMN plan TEXT;")
