"""The synchronous conversation store: one SQLite connection, used from one thread.

The UI never calls this directly (it would block); it goes through ``AsyncStore``, which
owns one of these on a dedicated writer thread. The CLI and tests use it as is.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Self

from desktop_app.core.errors import StorageError
from desktop_app.core.llm.types import ChatMessage
from desktop_app.core.store import rows
from desktop_app.core.store.benchmarks import BenchmarksMixin
from desktop_app.core.store.branches import BranchesMixin
from desktop_app.core.store.db import WriterLock, connect, default_db_path
from desktop_app.core.store.evals import EvalsMixin
from desktop_app.core.store.history import (
    HISTORY_COLUMNS,
    history_from_rows,
    place_delivered_interrupts,
)
from desktop_app.core.store.items import ItemsMixin
from desktop_app.core.store.maintenance import MaintenanceMixin
from desktop_app.core.store.records import (
    MODES,
    Conversation,
    ConversationDetail,
    Message,
    SearchHit,
)
from desktop_app.core.store.rows import auto_title as _auto_title
from desktop_app.core.store.search import search_messages

#: Titles derived from the first user message are cut to this many characters.
AUTO_TITLE_LENGTH = rows.AUTO_TITLE_LENGTH


class ConversationNotFoundError(StorageError):
    """No conversation (or message) with that id exists."""


class ConversationStore(ItemsMixin, EvalsMixin, BenchmarksMixin, BranchesMixin,
                        MaintenanceMixin):
    """Conversations, messages, tool steps, artifacts and interrupts in one SQLite file.

    Opening runs pending migrations and, if this process is the database's writer, marks
    answers a crash left ``streaming`` as ``interrupted``. ``writer=False`` opens a second
    connection for reads only (WAL lets it read while the writer writes).
    """

    def __init__(self, path: Path | None = None, *, writer: bool = True) -> None:
        self.path = Path(path) if path is not None else default_db_path()
        self._lock = WriterLock(self.path) if writer else None
        self.conn = connect(self.path, migrate_schema=writer)
        #: How many interrupted answers the crash recovery found on open.
        self.recovered = 0
        if self._lock is not None and self._lock.acquire():
            self.recovered = self.recover_interrupted()

    # --- lifecycle ---------------------------------------------------------------------------
    def close(self) -> None:
        """Close the connection (checkpointing the WAL) and release the writer lock."""
        try:
            # Cheap, and keeps the query planner's statistics current as the history grows.
            with contextlib.suppress(sqlite3.Error):
                self.conn.execute("PRAGMA optimize")
            self.conn.close()
        finally:
            if self._lock is not None:
                self._lock.release()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """All statements inside commit together or not at all.

        Nesting joins the outer transaction (an import wraps many ``add_message`` calls in
        one), so an error anywhere rolls back the whole outer unit.
        """
        if self.conn.in_transaction:
            yield self.conn
            return
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            yield self.conn
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise
        self.conn.execute("COMMIT")

    # --- conversations -------------------------------------------------------------------------
    def create_conversation(self, title: str = "", *, model: str | None = None,
                            mode: str = "react", id: str | None = None,
                            created_at: float | None = None, pinned: bool = False,
                            archived: bool = False) -> Conversation:
        """A new, empty conversation (an empty title is filled from the first user message)."""
        if mode not in MODES:
            raise StorageError(f"Unknown conversation mode {mode!r}.", hint=f"Use one of {MODES}.")
        now = created_at if created_at is not None else time.time()
        conv_id = id or uuid.uuid4().hex
        try:
            self.conn.execute(
                "INSERT INTO conversations (id, title, model, mode, created_at, updated_at, "
                "pinned, archived) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (conv_id, title, model, mode, now, now, int(pinned), int(archived)))
        except sqlite3.IntegrityError as exc:
            raise StorageError(f"A conversation with id {conv_id} already exists.") from exc
        return self.get_conversation(conv_id)

    def get_conversation(self, conversation_id: str, *,
                         include_deleted: bool = True) -> Conversation:
        row = self.conn.execute(
            f"SELECT {rows.CONVERSATION_COLUMNS} FROM conversations c WHERE c.id = ?",
            (conversation_id,)).fetchone()
        if row is None or (not include_deleted and row[8] is not None):
            raise ConversationNotFoundError(f"No conversation with id {conversation_id!r}.",
                                            hint="List conversations to see the valid ids.")
        return rows.conversation(row)

    def resolve_id(self, prefix: str) -> str:
        """The full id of the one conversation whose id starts with ``prefix`` (like git)."""
        found = [r[0] for r in self.conn.execute(
            "SELECT id FROM conversations WHERE id >= ? AND id < ? LIMIT 2",
            (prefix, prefix + "\U0010ffff"))]
        if not found:
            raise ConversationNotFoundError(f"No conversation id starts with {prefix!r}.",
                                            hint="List conversations to see the valid ids.")
        if len(found) > 1:
            raise StorageError(f"Several conversation ids start with {prefix!r}.",
                               hint="Give more characters of the id.")
        return str(found[0])

    def list_conversations(self, *, archived: bool | None = False, deleted: bool = False,
                           title_contains: str | None = None, limit: int | None = None,
                           offset: int = 0) -> list[Conversation]:
        """Pinned first, then newest (most recently updated) first.

        ``archived``: False hides archived ones, True shows only them, None shows both.
        ``deleted``: True lists the trash instead.
        """
        where = ["c.deleted_at IS NOT NULL" if deleted else "c.deleted_at IS NULL"]
        params: list[Any] = []
        if archived is not None:
            where.append("c.archived = ?")
            params.append(int(archived))
        if title_contains:
            where.append("c.title LIKE ? ESCAPE '\\'")
            escaped = (title_contains.replace("\\", "\\\\").replace("%", "\\%")
                       .replace("_", "\\_"))
            params.append(f"%{escaped}%")
        params += [limit if limit is not None else -1, offset]
        sql = (f"SELECT {rows.CONVERSATION_COLUMNS} FROM conversations c "
               f"WHERE {' AND '.join(where)} "
               "ORDER BY c.pinned DESC, c.updated_at DESC, c.rowid DESC LIMIT ? OFFSET ?")
        return [rows.conversation(r) for r in self.conn.execute(sql, params)]

    def _update_conversation(self, conversation_id: str, sql_set: str, params: tuple[Any, ...],
                             *, touch: bool = False) -> Conversation:
        if touch:
            sql_set += ", updated_at = ?"
            params += (time.time(),)
        cur = self.conn.execute(f"UPDATE conversations SET {sql_set} WHERE id = ?",
                                (*params, conversation_id))
        if cur.rowcount == 0:
            raise ConversationNotFoundError(f"No conversation with id {conversation_id!r}.")
        return self.get_conversation(conversation_id)

    def rename_conversation(self, conversation_id: str, title: str) -> Conversation:
        return self._update_conversation(conversation_id, "title = ?", (title.strip(),))

    def set_pinned(self, conversation_id: str, pinned: bool = True) -> Conversation:
        return self._update_conversation(conversation_id, "pinned = ?", (int(pinned),))

    def set_archived(self, conversation_id: str, archived: bool = True) -> Conversation:
        return self._update_conversation(conversation_id, "archived = ?", (int(archived),))

    def set_model(self, conversation_id: str, model: str | None) -> Conversation:
        return self._update_conversation(conversation_id, "model = ?", (model,))

    def set_assistant(self, conversation_id: str, assistant: str | None,
                      chat_options: dict[str, Any] | None = None) -> Conversation:
        """The chat's assistant and its own overrides of it."""
        return self._update_conversation(conversation_id, "assistant = ?, chat_options = ?",
                                         (assistant, json.dumps(chat_options or {})))

    def set_mode(self, conversation_id: str, mode: str) -> Conversation:
        if mode not in MODES:
            raise StorageError(f"Unknown conversation mode {mode!r}.", hint=f"Use one of {MODES}.")
        return self._update_conversation(conversation_id, "mode = ?", (mode,))

    def delete_conversation(self, conversation_id: str) -> Conversation:
        """Move to the trash (undo with ``restore_conversation``; ``purge_deleted`` empties it)."""
        return self._update_conversation(conversation_id, "deleted_at = ?", (time.time(),))

    def restore_conversation(self, conversation_id: str) -> Conversation:
        """Take a conversation back out of the trash."""
        return self._update_conversation(conversation_id, "deleted_at = NULL", ())

    def purge_deleted(self, *, older_than: float = 0.0) -> int:
        """Permanently delete trashed conversations trashed more than ``older_than`` s ago."""
        cutoff = time.time() - older_than
        with self.transaction() as conn:
            cur = conn.execute(
                "DELETE FROM conversations WHERE deleted_at IS NOT NULL AND deleted_at <= ?",
                (cutoff,))
        return cur.rowcount

    # --- messages ------------------------------------------------------------------------------
    def add_message(self, conversation_id: str, role: str, content: str = "", *,
                    status: str = "complete", reasoning: str | None = None,
                    model: str | None = None, prompt_tokens: int | None = None,
                    completion_tokens: int | None = None, ttft: float | None = None,
                    elapsed: float | None = None, tokens_per_second: float | None = None,
                    error: str | None = None, pinned: bool = False,
                    tool_calls: list[dict[str, Any]] | None = None,
                    tool_call_id: str | None = None, name: str | None = None,
                    created_at: float | None = None,
                    prompt_tokens_per_second: float | None = None,
                    iterations: int | None = None, cut: str | None = None,
                    plan: str | None = None) -> Message:
        """Append a message (committed before this returns) and bump the conversation."""
        import json

        now = created_at if created_at is not None else time.time()
        try:
            with self.transaction() as conn:
                columns = rows.MESSAGE_COLUMNS.replace("id, ", "", 1)
                cur = conn.execute(
                    f"INSERT INTO messages ({columns}) "
                    f"VALUES ({', '.join('?' * (columns.count(',') + 1))})",
                    (conversation_id, role, content, now, status, reasoning, model,
                     prompt_tokens, completion_tokens, ttft, elapsed, tokens_per_second, error,
                     int(pinned), json.dumps(tool_calls) if tool_calls else None,
                     tool_call_id, name, prompt_tokens_per_second, iterations, cut, plan))
                message_id = int(cur.lastrowid or 0)
                conn.execute("UPDATE conversations SET updated_at = MAX(updated_at, ?) "
                             "WHERE id = ?", (now, conversation_id))
                if role == "user" and content.strip():
                    conn.execute("UPDATE conversations SET title = ? WHERE id = ? AND title = ''",
                                 (_auto_title(content), conversation_id))
        except sqlite3.IntegrityError as exc:
            raise _integrity_error(exc, conversation_id) from exc
        return self.get_message(message_id)

    def add_chat_message(self, conversation_id: str, message: ChatMessage,
                         **fields: Any) -> Message:
        """Store an engine ``ChatMessage`` (tool calls, reasoning and pin included)."""
        calls = [c.model_dump() for c in message.tool_calls] or None
        return self.add_message(conversation_id, message.role, message.content,
                                reasoning=message.reasoning_content, pinned=message.pinned,
                                tool_calls=calls, tool_call_id=message.tool_call_id,
                                name=message.name, **fields)

    def update_message(self, message_id: int, **fields: Any) -> None:
        """Change columns of one message (``content``, ``status``, usage, timings...)."""
        allowed = {"content", "reasoning", "status", "model", "prompt_tokens",
                   "completion_tokens", "ttft", "elapsed", "tokens_per_second", "error",
                   "prompt_tokens_per_second", "iterations", "cut", "plan"}
        unknown = set(fields) - allowed
        if unknown:
            raise ValueError(f"cannot update message fields {sorted(unknown)}")
        if not fields:
            return
        assignments = ", ".join(f"{name} = ?" for name in fields)
        try:
            cur = self.conn.execute(f"UPDATE messages SET {assignments} WHERE id = ?",
                                    (*fields.values(), message_id))
        except sqlite3.IntegrityError as exc:
            raise StorageError(f"Invalid message update {fields!r}: {exc}") from exc
        if cur.rowcount == 0:
            raise ConversationNotFoundError(f"No message with id {message_id}.")

    def get_message(self, message_id: int) -> Message:
        row = self.conn.execute(f"SELECT {rows.MESSAGE_COLUMNS} FROM messages WHERE id = ?",
                                (message_id,)).fetchone()
        if row is None:
            raise ConversationNotFoundError(f"No message with id {message_id}.")
        return rows.message(row)

    def list_messages(self, conversation_id: str, *, with_steps: bool = False,
                      limit: int | None = None, before_id: int | None = None) -> list[Message]:
        """Messages of a conversation, oldest first.

        ``limit`` keeps only the newest ``limit`` (before message ``before_id``, if given), so
        a chat view can show the end of a long conversation at once and page back later.
        """
        sql = f"SELECT {rows.MESSAGE_COLUMNS} FROM messages WHERE conversation_id = ?"
        params: list[Any] = [conversation_id]
        if before_id is not None:
            sql += " AND id < ?"
            params.append(before_id)
        if limit is None:
            found = self.conn.execute(sql + " ORDER BY id", params).fetchall()
        else:
            found = self.conn.execute(sql + " ORDER BY id DESC LIMIT ?",
                                      (*params, limit)).fetchall()[::-1]
        if not with_steps or not found:
            return [rows.message(r) for r in found]
        steps = self.steps_by_message(conversation_id, from_message_id=found[0][0])
        return [rows.message(r, steps.get(r[0])) for r in found]

    def delete_messages_from(self, message_id: int) -> int:
        """Delete this message and every later one of its conversation (for regenerate)."""
        conversation_id = self.get_message(message_id).conversation_id
        with self.transaction() as conn:
            first = conn.execute(
                "SELECT content FROM messages WHERE conversation_id = ? AND role = 'user' "
                "AND id >= ? AND NOT EXISTS (SELECT 1 FROM messages WHERE conversation_id = ? "
                "AND role = 'user' AND id < ?) ORDER BY id LIMIT 1",
                (conversation_id, message_id, conversation_id, message_id)).fetchone()
            cur = conn.execute("DELETE FROM messages WHERE conversation_id = ? AND id >= ?",
                               (conversation_id, message_id))
            deleted = cur.rowcount
            if first is not None:
                # The first question goes (edit and resend): a title made from it goes too,
                # and the next question names the chat. A title the user chose stays.
                conn.execute("UPDATE conversations SET title = '' WHERE id = ? AND title = ?",
                             (conversation_id, _auto_title(first[0])))
        return deleted

    def load_history(self, conversation_id: str) -> list[ChatMessage]:
        """The conversation as the engine's ``history`` (see ``history.history_from_rows``).

        Interrupts a run took in are placed right after that run's question.
        """
        self.get_conversation(conversation_id)
        found = self.conn.execute(
            f"SELECT {HISTORY_COLUMNS} FROM messages WHERE conversation_id = ? ORDER BY id",
            (conversation_id,)).fetchall()
        moves = dict(self.conn.execute(
            "SELECT message_id, run_message_id FROM interrupts WHERE conversation_id = ? "
            "AND status = 'delivered' AND run_message_id IS NOT NULL", (conversation_id,)))
        return history_from_rows(place_delivered_interrupts(found, moves))

    def load_conversation(self, conversation_id: str, *,
                          last: int | None = None) -> ConversationDetail:
        """Everything the chat view needs: messages with tool steps, artifacts, interrupts.

        ``last`` limits the messages to the newest ``last`` (page back with
        ``list_messages(before_id=...)``); artifacts and interrupts are always complete.
        """
        return ConversationDetail(
            conversation=self.get_conversation(conversation_id),
            messages=self.list_messages(conversation_id, with_steps=True, limit=last),
            artifacts=self.list_artifacts(conversation_id),
            interrupts=self.list_interrupts(conversation_id),
            versions=self.stored_branches(conversation_id))

    # --- search --------------------------------------------------------------------------------
    def search(self, text: str, *, limit: int = 50, conversation_id: str | None = None,
               include_archived: bool = True,
               highlight: tuple[str, str] = ("**", "**")) -> list[SearchHit]:
        """Full-text search over all messages, best match first (see ``search.py``), then
        matches in the versions an edit or regenerate kept (marked "earlier version")."""
        hits = search_messages(self.conn, text, limit=limit, conversation_id=conversation_id,
                               include_archived=include_archived, highlight=highlight)
        if len(hits) < limit:
            hits += self.search_versions(text, limit=limit - len(hits),
                                         conversation_id=conversation_id)
        return hits


def _integrity_error(exc: sqlite3.IntegrityError, conversation_id: str) -> StorageError:
    if "FOREIGN KEY" in str(exc):
        return ConversationNotFoundError(f"No conversation with id {conversation_id!r}.")
    return StorageError(f"The message was rejected by the database: {exc}",
                        hint="Role must be system/user/assistant/tool and status "
                             "complete/streaming/interrupted/error.")
