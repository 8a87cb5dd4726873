"""Branches: edit and regenerate keep the earlier version instead of deleting it.

A conversation's ``messages`` are always its *active* path, so everything that reads a
conversation (the engine's history, search, the window) sees one line of messages. A fork
is the position of a question that was edited or asked again (the number of messages
before it); the versions that are not shown live in ``branches``, one row per version,
with their messages, tool steps, artifacts and interrupts, and the forks further down that
version (a version carries its own sub-branches). Switching versions swaps the active tail
with a stored one in one transaction.

Version numbers at a fork count from 1 in the order the versions were made; the number of
the active one is in ``conversations.branch_state``.
"""

from __future__ import annotations

import json
import sqlite3
import time
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any

from desktop_app.core.errors import StorageError
from desktop_app.core.store.records import SearchHit
from desktop_app.core.store.rows import auto_title

#: Tables holding a tail's rows, with their columns that point at messages or steps.
_MESSAGE_REFS = {"tool_steps": ("message_id",), "interrupts": ("message_id", "run_message_id"),
                 "artifacts": ("message_id",)}


@dataclass(frozen=True)
class Fork:
    """Where versions diverge: ``index`` messages come before; version ``active`` of
    ``total`` is shown."""

    index: int
    active: int
    total: int


def _rows(conn: sqlite3.Connection, sql: str, params: tuple[Any, ...]) -> list[dict[str, Any]]:
    cur = conn.execute(sql, params)
    names = [d[0] for d in cur.description]
    return [dict(zip(names, row, strict=True)) for row in cur.fetchall()]


class BranchesMixin:
    """Branch storage (needs ``conn`` and ``transaction()``)."""

    conn: sqlite3.Connection

    def transaction(self) -> AbstractContextManager[sqlite3.Connection]:
        raise NotImplementedError

    # --- reading --------------------------------------------------------------------------------
    def _state(self, conn: sqlite3.Connection, conversation_id: str) -> dict[int, int]:
        row = conn.execute("SELECT branch_state FROM conversations WHERE id = ?",
                           (conversation_id,)).fetchone()
        if row is None:
            raise StorageError(f"No conversation with id {conversation_id!r}.")
        try:
            return {int(k): int(v) for k, v in json.loads(row[0] or "{}").items()}
        except (ValueError, AttributeError):
            return {}

    def _set_state(self, conn: sqlite3.Connection, conversation_id: str,
                   state: dict[int, int]) -> None:
        conn.execute("UPDATE conversations SET branch_state = ? WHERE id = ?",
                     (json.dumps({str(k): v for k, v in sorted(state.items())}),
                      conversation_id))

    def forks(self, conversation_id: str) -> list[Fork]:
        """The forks on the active path, with how many versions each has."""
        state = self._state(self.conn, conversation_id)
        counts = dict(self.conn.execute(
            "SELECT fork_index, COUNT(*) FROM branches WHERE conversation_id = ? "
            "GROUP BY fork_index", (conversation_id,)).fetchall())
        return [Fork(index, state.get(index, 1), counts.get(index, 0) + 1)
                for index in sorted(set(counts) | set(state)) if counts.get(index)]

    def stored_branches(self, conversation_id: str) -> list[dict[str, Any]]:
        """The versions not shown (for export): fork, version number and their messages."""
        rows = self.conn.execute(
            "SELECT fork_index, variant, created_at, payload FROM branches "
            "WHERE conversation_id = ? ORDER BY fork_index, variant", (conversation_id,))
        return [{"fork_index": f, "version": v, "created_at": c, **json.loads(p)}
                for f, v, c, p in rows]

    def search_versions(self, text: str, *, limit: int = 20,
                        conversation_id: str | None = None) -> list[SearchHit]:
        """Messages of stored versions containing ``text`` (case-insensitive), newest
        first; ``message_id`` is 0 (the message is not shown until its version is)."""
        words = text.strip().lower()
        if not words:
            return []
        sql = ("SELECT b.conversation_id, c.title, b.payload FROM branches b JOIN "
               "conversations c ON c.id = b.conversation_id WHERE c.deleted_at IS NULL "
               "AND instr(lower(b.payload), ?) > 0")
        params: list[Any] = [words]
        if conversation_id:
            sql += " AND b.conversation_id = ?"
            params.append(conversation_id)
        hits: list[SearchHit] = []
        for conv, title, payload in self.conn.execute(sql + " ORDER BY b.created_at DESC",
                                                      params):
            for message in json.loads(payload).get("messages", []):
                content = message.get("content") or ""
                at = content.lower().find(words)
                if at < 0 or message.get("role") not in ("user", "assistant"):
                    continue
                start = max(at - 40, 0)
                hits.append(SearchHit(
                    conversation_id=conv, conversation_title=title, message_id=0,
                    role=message["role"], rank=0.0, created_at=message.get("created_at", 0),
                    snippet="(earlier version) " + content[start:at + len(words) + 60]))
                if len(hits) >= limit:
                    return hits
        return hits

    # --- writing --------------------------------------------------------------------------------
    def _snapshot(self, conn: sqlite3.Connection, conversation_id: str,
                  fork_index: int) -> dict[str, Any]:
        """The active tail from ``fork_index`` with everything attached, removed."""
        ids = [r[0] for r in conn.execute(
            "SELECT id FROM messages WHERE conversation_id = ? ORDER BY id LIMIT -1 OFFSET ?",
            (conversation_id, fork_index))]
        if not ids:
            return {"messages": [], "tables": {}, "nested": [], "state": {}}
        first = ids[0]
        payload: dict[str, Any] = {
            "messages": _rows(conn, "SELECT * FROM messages WHERE conversation_id = ? AND id >= ? "
                              "ORDER BY id", (conversation_id, first)),
            "tables": {},
        }
        marks = ",".join("?" * len(ids))
        for table in _MESSAGE_REFS:
            payload["tables"][table] = _rows(
                conn, f"SELECT * FROM {table} WHERE message_id IN ({marks}) ORDER BY id",
                tuple(ids))
        payload["nested"] = _rows(conn, "SELECT fork_index, variant, created_at, payload FROM "
                                        "branches WHERE conversation_id = ? AND fork_index > ?",
                                  (conversation_id, fork_index))
        state = self._state(conn, conversation_id)
        payload["state"] = {str(k): v for k, v in state.items() if k > fork_index}
        conn.execute("DELETE FROM branches WHERE conversation_id = ? AND fork_index > ?",
                     (conversation_id, fork_index))
        self._set_state(conn, conversation_id,
                        {k: v for k, v in state.items() if k <= fork_index})
        conn.execute("DELETE FROM messages WHERE conversation_id = ? AND id >= ?",
                     (conversation_id, first))
        return payload

    def _restore(self, conn: sqlite3.Connection, conversation_id: str,
                 payload: dict[str, Any]) -> None:
        new_ids: dict[int, int] = {}
        for message in payload["messages"]:
            old = message.pop("id")
            columns = ", ".join(message)
            cur = conn.execute(
                f"INSERT INTO messages ({columns}) VALUES ({','.join('?' * len(message))})",
                tuple(message.values()))
            new_ids[old] = int(cur.lastrowid or 0)
        step_ids: dict[int, int] = {}
        for table in ("tool_steps", "interrupts", "artifacts"):
            for row in payload["tables"].get(table, []):
                old = row.pop("id")
                for column in _MESSAGE_REFS[table]:
                    if row.get(column) is not None:  # an earlier message keeps its id
                        row[column] = new_ids.get(row[column], row[column])
                if table == "artifacts" and row.get("step_id") is not None:
                    row["step_id"] = step_ids.get(row["step_id"])
                columns = ", ".join(row)
                cur = conn.execute(
                    f"INSERT INTO {table} ({columns}) VALUES ({','.join('?' * len(row))})",
                    tuple(row.values()))
                if table == "tool_steps":
                    step_ids[old] = int(cur.lastrowid or 0)
        for nested in payload.get("nested", []):
            conn.execute("INSERT INTO branches (conversation_id, fork_index, variant, "
                         "created_at, payload) VALUES (?, ?, ?, ?, ?)",
                         (conversation_id, nested["fork_index"], nested["variant"],
                          nested["created_at"], nested["payload"]))
        state = self._state(conn, conversation_id)
        state.update({int(k): int(v) for k, v in payload.get("state", {}).items()})
        self._set_state(conn, conversation_id, state)

    def fork_from(self, message_id: int) -> Fork:
        """Keep the tail from ``message_id`` (a question about to be edited or asked again)
        as a stored version; the next messages sent become a new version."""
        row = self.conn.execute("SELECT conversation_id FROM messages WHERE id = ?",
                                (message_id,)).fetchone()
        if row is None:
            raise StorageError(f"No message with id {message_id}.")
        conversation_id = row[0]
        with self.transaction() as conn:
            index = conn.execute("SELECT COUNT(*) FROM messages WHERE conversation_id = ? "
                                 "AND id < ?", (conversation_id, message_id)).fetchone()[0]
            state = self._state(conn, conversation_id)
            total = conn.execute("SELECT COUNT(*) FROM branches WHERE conversation_id = ? AND "
                                 "fork_index = ?", (conversation_id, index)).fetchone()[0] + 1
            active = state.get(index, 1)
            payload = self._snapshot(conn, conversation_id, index)
            questions = [m["content"] for m in payload["messages"] if m["role"] == "user"]
            if questions and not conn.execute(
                    "SELECT 1 FROM messages WHERE conversation_id = ? AND role = 'user'",
                    (conversation_id,)).fetchone():
                # The first question is being edited: a title made from it goes, and the
                # new question names the chat. A title the user chose stays.
                conn.execute("UPDATE conversations SET title = '' WHERE id = ? AND title = ?",
                             (conversation_id, auto_title(questions[0])))
            conn.execute("INSERT INTO branches (conversation_id, fork_index, variant, "
                         "created_at, payload) VALUES (?, ?, ?, ?, ?)",
                         (conversation_id, index, active, time.time(), json.dumps(payload)))
            state = self._state(conn, conversation_id)
            state[index] = total + 1
            self._set_state(conn, conversation_id, state)
        return Fork(index, total + 1, total + 1)

    def switch_branch(self, conversation_id: str, fork_index: int, version: int) -> Fork:
        """Show version ``version`` at ``fork_index``; the one shown now is kept."""
        with self.transaction() as conn:
            state = self._state(conn, conversation_id)
            active = state.get(fork_index, 1)
            if version == active:
                total = conn.execute("SELECT COUNT(*) FROM branches WHERE conversation_id = ? "
                                     "AND fork_index = ?", (conversation_id, fork_index)
                                     ).fetchone()[0] + 1
                return Fork(fork_index, active, total)
            stored = conn.execute(
                "SELECT id, payload FROM branches WHERE conversation_id = ? AND fork_index = ? "
                "AND variant = ?", (conversation_id, fork_index, version)).fetchone()
            if stored is None:
                raise StorageError(f"There is no version {version} at this point.")
            current = self._snapshot(conn, conversation_id, fork_index)
            conn.execute("DELETE FROM branches WHERE id = ?", (stored[0],))
            conn.execute("INSERT INTO branches (conversation_id, fork_index, variant, "
                         "created_at, payload) VALUES (?, ?, ?, ?, ?)",
                         (conversation_id, fork_index, active, time.time(),
                          json.dumps(current)))
            self._restore(conn, conversation_id, json.loads(stored[1]))
            state = self._state(conn, conversation_id)
            state[fork_index] = version
            self._set_state(conn, conversation_id, state)
            total = conn.execute("SELECT COUNT(*) FROM branches WHERE conversation_id = ? AND "
                                 "fork_index = ?", (conversation_id, fork_index)).fetchone()[0]
        return Fork(fork_index, version, total + 1)
