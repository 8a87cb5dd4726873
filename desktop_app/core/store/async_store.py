"""The asyncio face of the conversation store: SQLite work never runs on the caller's loop.

All writes go to one dedicated writer thread that owns the writing connection, so writes
are serialised in the order they were awaited and the UI thread's event loop never waits
on the disk. Reads use a second connection on their own thread (WAL lets them proceed
while a write is in progress). Both connections live and die on their own threads, as
``sqlite3`` requires.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, is_dataclass
from pathlib import Path
from typing import Any, Self, TypeVar

from desktop_app.core.errors import StorageError
from desktop_app.core.llm.types import ChatMessage
from desktop_app.core.store.conversation_store import ConversationStore
from desktop_app.core.store.db import default_db_path
from desktop_app.core.store.evals import RESULT_KEYS, EvalRun
from desktop_app.core.store.records import (
    ArtifactRecord,
    Conversation,
    ConversationDetail,
    Interrupt,
    Message,
    SearchHit,
    ToolStep,
)

T = TypeVar("T")


class AsyncStore:
    """``await``-able conversation store; open with ``await AsyncStore.open()``."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = Path(path) if path is not None else default_db_path()
        self._writer_pool = ThreadPoolExecutor(1, thread_name_prefix="store-writer")
        self._reader_pool = ThreadPoolExecutor(1, thread_name_prefix="store-reader")
        self._writer: ConversationStore | None = None
        self._reader: ConversationStore | None = None

    @classmethod
    async def open(cls, path: Path | None = None) -> AsyncStore:
        """Open (creating, migrating and crash-recovering) the database off the loop."""
        store = cls(path)
        loop = asyncio.get_running_loop()
        try:
            store._writer = await loop.run_in_executor(
                store._writer_pool, lambda: ConversationStore(store.path))
            store._reader = await loop.run_in_executor(
                store._reader_pool, lambda: ConversationStore(store.path, writer=False))
        except BaseException:
            await store.aclose()
            raise
        return store

    @property
    def recovered(self) -> int:
        """Interrupted answers found (and marked) when the store was opened."""
        return self._writer.recovered if self._writer is not None else 0

    async def aclose(self) -> None:
        """Finish queued writes, close both connections, stop the threads."""
        loop = asyncio.get_running_loop()
        for pool, attr in ((self._reader_pool, "_reader"), (self._writer_pool, "_writer")):
            store = getattr(self, attr)
            if store is not None:
                await loop.run_in_executor(pool, store.close)
                setattr(self, attr, None)
            pool.shutdown(wait=False)

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def _write(self, fn: Callable[[ConversationStore], T]) -> T:
        return await self._run(self._writer_pool, self._writer, fn, "Saving")

    async def _read(self, fn: Callable[[ConversationStore], T]) -> T:
        return await self._run(self._reader_pool, self._reader, fn, "Reading")

    @staticmethod
    async def _run(pool: ThreadPoolExecutor, store: ConversationStore | None,
                   fn: Callable[[ConversationStore], T], what: str) -> T:
        if store is None:
            raise StorageError("The conversation store is closed.")
        try:
            return await asyncio.get_running_loop().run_in_executor(pool, fn, store)
        except sqlite3.Error as exc:
            # Disk full, read-only folder, a lock held too long: one error type for the UI.
            raise StorageError(f"{what} conversations failed: {exc}",
                               hint="Check that the disk has free space and the data folder "
                                    "is writable; nothing already saved was lost.") from exc

    # --- writes --------------------------------------------------------------------------------
    async def create_conversation(self, title: str = "", **fields: Any) -> Conversation:
        return await self._write(lambda s: s.create_conversation(title, **fields))

    async def rename_conversation(self, conversation_id: str, title: str) -> Conversation:
        return await self._write(lambda s: s.rename_conversation(conversation_id, title))

    async def set_pinned(self, conversation_id: str, pinned: bool = True) -> Conversation:
        return await self._write(lambda s: s.set_pinned(conversation_id, pinned))

    async def set_archived(self, conversation_id: str, archived: bool = True) -> Conversation:
        return await self._write(lambda s: s.set_archived(conversation_id, archived))

    async def set_model(self, conversation_id: str, model: str | None) -> Conversation:
        return await self._write(lambda s: s.set_model(conversation_id, model))

    async def set_assistant(self, conversation_id: str, assistant: str | None,
                            chat_options: dict[str, Any] | None = None) -> Conversation:
        return await self._write(lambda s: s.set_assistant(conversation_id, assistant,
                                                           chat_options))

    async def set_mode(self, conversation_id: str, mode: str) -> Conversation:
        return await self._write(lambda s: s.set_mode(conversation_id, mode))

    async def delete_conversation(self, conversation_id: str) -> Conversation:
        return await self._write(lambda s: s.delete_conversation(conversation_id))

    async def restore_conversation(self, conversation_id: str) -> Conversation:
        return await self._write(lambda s: s.restore_conversation(conversation_id))

    async def purge_deleted(self, *, older_than: float = 0.0) -> int:
        return await self._write(lambda s: s.purge_deleted(older_than=older_than))

    async def add_message(self, conversation_id: str, role: str, content: str = "",
                          **fields: Any) -> Message:
        return await self._write(lambda s: s.add_message(conversation_id, role, content, **fields))

    async def add_chat_message(self, conversation_id: str, message: ChatMessage,
                               **fields: Any) -> Message:
        return await self._write(lambda s: s.add_chat_message(conversation_id, message, **fields))

    async def update_message(self, message_id: int, **fields: Any) -> None:
        await self._write(lambda s: s.update_message(message_id, **fields))

    async def delete_messages_from(self, message_id: int) -> int:
        return await self._write(lambda s: s.delete_messages_from(message_id))

    async def add_tool_step(self, message_id: int, iteration: int, tool: str, args: Any = None,
                            **fields: Any) -> ToolStep:
        return await self._write(lambda s: s.add_tool_step(message_id, iteration, tool, args,
                                                           **fields))

    async def update_tool_step(self, step_id: int, **fields: Any) -> ToolStep:
        return await self._write(lambda s: s.update_tool_step(step_id, **fields))

    async def add_artifact(self, conversation_id: str, name: str, mime_type: str, content: str,
                           **fields: Any) -> ArtifactRecord:
        return await self._write(lambda s: s.add_artifact(conversation_id, name, mime_type,
                                                          content, **fields))

    async def add_interrupt(self, conversation_id: str, content: str, **fields: Any) -> Interrupt:
        return await self._write(lambda s: s.add_interrupt(conversation_id, content, **fields))

    async def mark_interrupts_delivered(self, interrupt_ids: Iterable[int]) -> None:
        ids = list(interrupt_ids)
        await self._write(lambda s: s.mark_interrupts_delivered(ids))

    async def save_eval_run(self, *, results: Sequence[Any], **fields: Any) -> EvalRun:
        """Store an evaluation run; ``results`` are dicts or dataclasses with RESULT_KEYS."""
        rows = [_result_row(r) for r in results]
        return await self._write(lambda s: s.save_eval_run(results=rows, **fields))

    async def fork_from(self, message_id: int) -> Any:
        return await self._write(lambda s: s.fork_from(message_id))

    async def switch_branch(self, conversation_id: str, fork_index: int, version: int) -> Any:
        return await self._write(lambda s: s.switch_branch(conversation_id, fork_index, version))

    async def forks(self, conversation_id: str) -> list[Any]:
        return await self._read(lambda s: s.forks(conversation_id))

    async def save_benchmark(self, **fields: Any) -> Any:
        return await self._write(lambda s: s.save_benchmark(**fields))

    # --- reads ---------------------------------------------------------------------------------
    async def latest_benchmarks(self) -> dict[str, Any]:
        return await self._read(lambda s: s.latest_benchmarks())

    async def list_eval_runs(self, **filters: Any) -> list[EvalRun]:
        return await self._read(lambda s: s.list_eval_runs(**filters))

    async def eval_results(self, run_id: int) -> list[dict[str, Any]]:
        return await self._read(lambda s: s.eval_results(run_id))

    async def get_conversation(self, conversation_id: str) -> Conversation:
        return await self._read(lambda s: s.get_conversation(conversation_id))

    async def resolve_id(self, prefix: str) -> str:
        return await self._read(lambda s: s.resolve_id(prefix))

    async def list_conversations(self, **filters: Any) -> list[Conversation]:
        return await self._read(lambda s: s.list_conversations(**filters))

    async def get_message(self, message_id: int) -> Message:
        return await self._read(lambda s: s.get_message(message_id))

    async def list_messages(self, conversation_id: str, *, with_steps: bool = False,
                            limit: int | None = None,
                            before_id: int | None = None) -> list[Message]:
        return await self._read(lambda s: s.list_messages(
            conversation_id, with_steps=with_steps, limit=limit, before_id=before_id))

    async def load_history(self, conversation_id: str) -> list[ChatMessage]:
        return await self._read(lambda s: s.load_history(conversation_id))

    async def load_conversation(self, conversation_id: str, *,
                                last: int | None = None) -> ConversationDetail:
        return await self._read(lambda s: s.load_conversation(conversation_id, last=last))

    async def list_tool_steps(self, message_id: int) -> list[ToolStep]:
        return await self._read(lambda s: s.list_tool_steps(message_id))

    async def list_artifacts(self, conversation_id: str, *,
                             message_id: int | None = None) -> list[ArtifactRecord]:
        return await self._read(lambda s: s.list_artifacts(conversation_id,
                                                           message_id=message_id))

    async def get_artifact(self, artifact_id: int) -> ArtifactRecord:
        return await self._read(lambda s: s.get_artifact(artifact_id))

    async def pending_interrupts(self, conversation_id: str) -> list[Interrupt]:
        return await self._read(lambda s: s.pending_interrupts(conversation_id))

    async def search(self, text: str, **options: Any) -> list[SearchHit]:
        return await self._read(lambda s: s.search(text, **options))

    async def backup_to(self, target: Path) -> Path:
        """A consistent copy of the database (see ``ConversationStore.backup_to``)."""
        return await self._read(lambda s: s.backup_to(target))

    async def integrity_check(self) -> str:
        return await self._read(lambda s: s.integrity_check())


def _result_row(result: Any) -> dict[str, Any]:
    """One task result as the plain dict ``save_eval_run`` stores."""
    data = (asdict(result) if is_dataclass(result) and not isinstance(result, type)
            else dict(result))
    usage = data.get("usage") or {}
    data.setdefault("prompt_tokens", usage.get("prompt_tokens", 0) if isinstance(usage, dict)
                    else getattr(usage, "prompt_tokens", 0))
    data.setdefault("completion_tokens", usage.get("completion_tokens", 0)
                    if isinstance(usage, dict) else getattr(usage, "completion_tokens", 0))
    return {key: data.get(key) for key in RESULT_KEYS}
