"""What hangs off messages: tool steps, artifacts and user interrupts.

A mixin of ``ConversationStore`` (it uses the store's ``conn`` and ``transaction``), kept in
its own module so each file stays one concept.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterable, Iterator
from contextlib import AbstractContextManager
from typing import Any

from desktop_app.core.errors import StorageError
from desktop_app.core.store import rows
from desktop_app.core.store.records import ArtifactRecord, Interrupt, ToolStep


class ItemsMixin:
    """Tool steps, artifacts and interrupts (needs ``conn`` and ``transaction()``)."""

    conn: sqlite3.Connection

    def transaction(self) -> AbstractContextManager[sqlite3.Connection]:
        raise NotImplementedError

    # --- tool steps ----------------------------------------------------------------------------
    def add_tool_step(self, message_id: int, iteration: int, tool: str, args: Any = None, *,
                      observation: str = "", error: str | None = None,
                      elapsed: float | None = None,
                      created_at: float | None = None) -> ToolStep:
        """Record one tool call of the run that produced assistant message ``message_id``."""
        try:
            cur = self.conn.execute(
                "INSERT INTO tool_steps (message_id, iteration, tool, args, observation, error, "
                "elapsed, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (message_id, iteration, tool, rows.encode_args({} if args is None else args),
                 observation, error, elapsed,
                 created_at if created_at is not None else time.time()))
        except sqlite3.IntegrityError as exc:
            raise StorageError(f"No message with id {message_id} to attach the tool step to.",
                               hint="Store the assistant message first.") from exc
        return self.get_tool_step(int(cur.lastrowid or 0))

    def update_tool_step(self, step_id: int, *, observation: str | None = None,
                         error: str | None = None, elapsed: float | None = None) -> ToolStep:
        """Fill in a step's result once the tool finished."""
        self.conn.execute(
            "UPDATE tool_steps SET observation = COALESCE(?, observation), "
            "error = COALESCE(?, error), elapsed = COALESCE(?, elapsed) WHERE id = ?",
            (observation, error, elapsed, step_id))
        return self.get_tool_step(step_id)

    def get_tool_step(self, step_id: int) -> ToolStep:
        row = self.conn.execute(f"SELECT {rows.STEP_COLUMNS} FROM tool_steps WHERE id = ?",
                                (step_id,)).fetchone()
        if row is None:
            raise StorageError(f"No tool step with id {step_id}.")
        return rows.step(row)

    def list_tool_steps(self, message_id: int) -> list[ToolStep]:
        cur = self.conn.execute(
            f"SELECT {rows.STEP_COLUMNS} FROM tool_steps WHERE message_id = ? ORDER BY id",
            (message_id,))
        return [rows.step(r) for r in cur]

    def steps_by_message(self, conversation_id: str, *,
                         from_message_id: int = 0) -> dict[int, list[ToolStep]]:
        """Tool steps of a conversation (of messages from ``from_message_id`` on), by message."""
        cols = ", ".join(f"s.{c.strip()}" for c in rows.STEP_COLUMNS.split(","))
        cur = self.conn.execute(
            f"SELECT {cols} FROM tool_steps s JOIN messages m ON m.id = s.message_id "
            "WHERE m.conversation_id = ? AND m.id >= ? ORDER BY s.id",
            (conversation_id, from_message_id))
        grouped: dict[int, list[ToolStep]] = {}
        for r in cur:
            grouped.setdefault(r[1], []).append(rows.step(r))
        return grouped

    # --- artifacts -----------------------------------------------------------------------------
    def add_artifact(self, conversation_id: str, name: str, mime_type: str, content: str, *,
                     message_id: int | None = None, step_id: int | None = None,
                     created_at: float | None = None) -> ArtifactRecord:
        """Keep a document a tool produced with its conversation (and message/step)."""
        try:
            cur = self.conn.execute(
                "INSERT INTO artifacts (conversation_id, message_id, step_id, name, mime_type, "
                "content, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (conversation_id, message_id, step_id, name, mime_type, content,
                 created_at if created_at is not None else time.time()))
        except sqlite3.IntegrityError as exc:
            raise StorageError(f"The artifact {name!r} refers to a conversation, message or "
                               f"step that does not exist: {exc}") from exc
        return self.get_artifact(int(cur.lastrowid or 0))

    def get_artifact(self, artifact_id: int) -> ArtifactRecord:
        row = self.conn.execute(f"SELECT {rows.ARTIFACT_COLUMNS} FROM artifacts WHERE id = ?",
                                (artifact_id,)).fetchone()
        if row is None:
            raise StorageError(f"No artifact with id {artifact_id}.")
        return rows.artifact(row)

    def list_artifacts(self, conversation_id: str, *,
                       message_id: int | None = None) -> list[ArtifactRecord]:
        sql = f"SELECT {rows.ARTIFACT_COLUMNS} FROM artifacts WHERE conversation_id = ?"
        params: list[Any] = [conversation_id]
        if message_id is not None:
            sql += " AND message_id = ?"
            params.append(message_id)
        return [rows.artifact(r) for r in self.conn.execute(sql + " ORDER BY id", params)]

    # --- interrupts ----------------------------------------------------------------------------
    def add_interrupt(self, conversation_id: str, content: str, *,
                      run_message_id: int | None = None,
                      created_at: float | None = None) -> Interrupt:
        """Store a follow-up sent during a run: a pinned user message plus its interrupt row.

        Stored the moment it arrives, so it is never lost, even if the run then crashes.
        """
        now = created_at if created_at is not None else time.time()
        try:
            with self.transaction() as conn:
                cur = conn.execute(
                    "INSERT INTO messages (conversation_id, role, content, pinned, created_at) "
                    "VALUES (?, 'user', ?, 1, ?)", (conversation_id, content, now))
                message_id = int(cur.lastrowid or 0)
                cur = conn.execute(
                    "INSERT INTO interrupts (conversation_id, message_id, run_message_id, "
                    "content, created_at) VALUES (?, ?, ?, ?, ?)",
                    (conversation_id, message_id, run_message_id, content, now))
                interrupt_id = int(cur.lastrowid or 0)
                conn.execute("UPDATE conversations SET updated_at = MAX(updated_at, ?) "
                             "WHERE id = ?", (now, conversation_id))
        except sqlite3.IntegrityError as exc:
            raise StorageError(f"Cannot store the interrupt: {exc}",
                               hint="The conversation (or run message) does not exist.") from exc
        return self._interrupts("id = ?", (interrupt_id,))[0]

    def mark_interrupts_delivered(self, interrupt_ids: Iterable[int]) -> None:
        """The engine drained these into a run."""
        ids = list(interrupt_ids)
        if ids:
            marks = ",".join("?" * len(ids))
            self.conn.execute(f"UPDATE interrupts SET status = 'delivered' WHERE id IN ({marks})",
                              ids)

    def pending_interrupts(self, conversation_id: str) -> list[Interrupt]:
        """Interrupts no run has taken yet (after a crash: the start of the next turn)."""
        return self._interrupts("conversation_id = ? AND status = 'pending'", (conversation_id,))

    def list_interrupts(self, conversation_id: str) -> list[Interrupt]:
        return self._interrupts("conversation_id = ?", (conversation_id,))

    def _interrupts(self, where: str, params: tuple[Any, ...]) -> list[Interrupt]:
        cur: Iterator[tuple[Any, ...]] = self.conn.execute(
            f"SELECT {rows.INTERRUPT_COLUMNS} FROM interrupts WHERE {where} ORDER BY id", params)
        return [rows.interrupt(r) for r in cur]
