"""Import conversations: our own JSON export and the ChatGPT data export.

Each conversation is imported in one transaction: a damaged entry is reported and skipped,
never half-imported. Re-importing is safe: a conversation already here unchanged is
skipped; one that changed is added as a copy with a fresh id (an import never overwrites).
"""

from __future__ import annotations

import json
import sqlite3
import uuid
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from desktop_app.core.errors import StorageError
from desktop_app.core.store.chatgpt import ImportedConversation, parse_chatgpt_conversation
from desktop_app.core.store.conversation_store import ConversationStore
from desktop_app.core.store.exporting import EXPORT_FORMAT, EXPORT_VERSION
from desktop_app.core.store.records import Conversation


@dataclass
class ImportReport:
    """What an import did: the conversations created and the entries skipped (with why)."""

    imported: list[Conversation] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    #: Entries whose conversation is already here with the same messages (re-importing
    #: the same or a newer export adds only what is new, never duplicates).
    unchanged: list[str] = field(default_factory=list)


def read_import_file(path: Path) -> Any:
    """Decoded JSON of an export file, or of ``conversations.json`` inside a ChatGPT zip."""
    try:
        if zipfile.is_zipfile(path):
            with zipfile.ZipFile(path) as archive:
                names = [n for n in archive.namelist() if n.endswith("conversations.json")]
                if not names:
                    raise StorageError(f"{path} is a zip without a conversations.json.",
                                       hint="Pick the ChatGPT export zip or a JSON export.")
                return json.loads(archive.read(min(names, key=len)).decode("utf-8"))
        return json.loads(path.read_text(encoding="utf-8"))
    except RecursionError:
        raise StorageError(f"Cannot read {path}: its JSON is nested deeper than any export.",
                           hint="Use a desktop-app JSON export or ChatGPT's conversations.json.") \
            from None
    except (OSError, UnicodeDecodeError, ValueError, zipfile.BadZipFile) as exc:
        raise StorageError(f"Cannot read {path} as an export file: {exc}",
                           hint="Use a desktop-app JSON export or ChatGPT's conversations.json.") \
            from exc


def detect_format(data: Any) -> str:
    """``"desktop-app"`` or ``"chatgpt"``; raises ``StorageError`` for anything else."""
    if isinstance(data, dict) and data.get("format") == EXPORT_FORMAT:
        return "desktop-app"
    if isinstance(data, dict) and "mapping" in data:
        return "chatgpt"
    if isinstance(data, list) and (not data or all(isinstance(c, dict) and "mapping" in c
                                                   for c in data)):
        return "chatgpt"
    raise StorageError("The file is neither a desktop-app export nor a ChatGPT export.",
                       hint="Export JSON from desktop-app, or use conversations.json from "
                            "ChatGPT's 'Export data'.")


def import_file(store: ConversationStore, path: Path) -> ImportReport:
    """Import every conversation in ``path`` (format detected from the content)."""
    return import_data(store, read_import_file(Path(path)))


def import_data(store: ConversationStore, data: Any) -> ImportReport:
    report = ImportReport()
    if detect_format(data) == "desktop-app":
        version = data.get("version")
        if not isinstance(version, int) or version > EXPORT_VERSION:
            raise StorageError(f"This export has format version {version!r}; this desktop-app "
                               f"reads up to version {EXPORT_VERSION}.",
                               hint="Update desktop-app to import it.")
        items: list[Any] = list(data.get("conversations") or [])
        for n, item in enumerate(items):
            _import_one(store, report, f"conversation {n + 1}",
                        lambda item=item: _from_ours(item))
    else:
        chats = data if isinstance(data, list) else [data]
        for n, item in enumerate(chats):
            label = f"ChatGPT conversation {n + 1} ({item.get('title') or 'untitled'})"
            _import_one(store, report, label, lambda item=item: parse_chatgpt_conversation(item))
    return report


#: Errors an entry of an export can cause, each ending that entry only. sqlite3's
#: InterfaceError/ProgrammingError: a value of a type SQLite cannot store (a dict as text).
_ENTRY_ERRORS = (KeyError, TypeError, ValueError, AttributeError, ArithmeticError,
                 RecursionError, sqlite3.InterfaceError, sqlite3.ProgrammingError)
#: Timestamps outside these bounds (seconds since 1970: 1990 to 2100) are not believed.
_EARLIEST, _LATEST = 631_152_000.0, 4_102_444_800.0


def timestamp(value: Any) -> float | None:
    """``value`` as a time the store can keep, or None (the store then uses now): an export
    may hold "yesterday", a dict or 10^30, which stored as they are broke every later
    listing of the conversations."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    seconds = float(value)
    return seconds if _EARLIEST <= seconds <= _LATEST else None


def _import_one(store: ConversationStore, report: ImportReport, label: str,
                parse: Any) -> None:
    try:
        conv = parse()
        with store.transaction():
            # Checked inside the write lock: two imports of one export at once must not
            # both find a conversation missing and both add it.
            if _already_there(store, conv):
                report.unchanged.append(f"{label}: already in the database, unchanged")
                return
            report.imported.append(_write(store, conv))
    except StorageError as exc:
        report.skipped.append(f"{label}: {exc}")
    except _ENTRY_ERRORS as exc:
        report.skipped.append(f"{label}: malformed entry ({type(exc).__name__}: {exc})")


def _from_ours(item: dict[str, Any]) -> ImportedConversation:
    messages = []
    for m in item["messages"]:
        usage, timings = m.get("usage") or {}, m.get("timings") or {}
        messages.append({
            "role": m["role"], "content": m.get("content") or "",
            "reasoning": m.get("reasoning"), "model": m.get("model"),
            # A "streaming" answer in an export was cut off when it was exported.
            "status": "interrupted" if m.get("status") == "streaming"
            else (m.get("status") or "complete"),
            "error": m.get("error"),
            "pinned": bool(m.get("pinned")), "created_at": m.get("created_at"),
            "tool_calls": m.get("tool_calls") or None, "tool_call_id": m.get("tool_call_id"),
            "name": m.get("name"), "prompt_tokens": usage.get("prompt_tokens"),
            "completion_tokens": usage.get("completion_tokens"), "ttft": timings.get("ttft"),
            "elapsed": timings.get("elapsed"),
            "tokens_per_second": timings.get("tokens_per_second"),
            "prompt_tokens_per_second": timings.get("prompt_tokens_per_second"),
            "iterations": timings.get("iterations"),
            "tool_steps": m.get("tool_steps") or [], "artifacts": m.get("artifacts") or [],
            "interrupt": m.get("interrupt"),
        })
    return ImportedConversation(
        id=item.get("id"), title=item.get("title") or "", model=item.get("model"),
        mode=item.get("mode") or "react", created_at=item.get("created_at"),
        updated_at=item.get("updated_at"), pinned=bool(item.get("pinned")),
        archived=bool(item.get("archived")), messages=messages,
        artifacts=item.get("artifacts") or [])


def _already_there(store: ConversationStore, conv: ImportedConversation) -> bool:
    """The same conversation (same id, same number of messages) was imported before.

    A conversation that changed since (more messages in the newer export) is imported as a
    copy next to the old one: the local one may have been continued here, so it is never
    overwritten.
    """
    if not isinstance(conv.id, str) or not conv.id:
        return False
    row = store.conn.execute(
        "SELECT (SELECT COUNT(*) FROM messages m WHERE m.conversation_id = c.id) "
        "FROM conversations c WHERE c.id = ?", (conv.id,)).fetchone()
    return row is not None and row[0] == len(conv.messages)


def _write(store: ConversationStore, conv: ImportedConversation) -> Conversation:
    conv_id = conv.id if isinstance(conv.id, str) and conv.id else uuid.uuid4().hex
    if store.conn.execute("SELECT 1 FROM conversations WHERE id = ?", (conv_id,)).fetchone():
        conv_id = uuid.uuid4().hex
    with store.transaction() as conn:
        store.create_conversation(str(conv.title), model=_text_or_none(conv.model),
                                  mode=str(conv.mode), id=conv_id,
                                  created_at=timestamp(conv.created_at), pinned=conv.pinned,
                                  archived=conv.archived)
        ids: list[int] = []
        for m in conv.messages:
            m["created_at"] = timestamp(m.get("created_at"))
            interrupt = m.pop("interrupt", None)
            steps, artifacts = m.pop("tool_steps"), m.pop("artifacts")
            role, content = m.pop("role"), m.pop("content")
            if interrupt is not None:
                run_index = interrupt.get("run_message_index")
                run_id = ids[run_index] if isinstance(run_index, int) and \
                    0 <= run_index < len(ids) else None
                rec = store.add_interrupt(conv_id, content, run_message_id=run_id,
                                          created_at=m.get("created_at"))
                if interrupt.get("status") == "delivered":
                    store.mark_interrupts_delivered([rec.id])
                ids.append(rec.message_id)
                continue
            message = store.add_message(conv_id, role, content, **m)
            ids.append(message.id)
            for s in steps:
                step = store.add_tool_step(
                    message.id, int(s.get("iteration") or 0), str(s["tool"]), s.get("args"),
                    observation=s.get("observation") or "", error=s.get("error"),
                    elapsed=s.get("elapsed"), created_at=timestamp(s.get("created_at")))
                for a in s.get("artifacts") or []:
                    _artifact(store, conv_id, a, message_id=message.id, step_id=step.id)
            for a in artifacts:
                _artifact(store, conv_id, a, message_id=message.id)
        for a in conv.artifacts:
            _artifact(store, conv_id, a)
        if timestamp(conv.updated_at) is not None:
            conn.execute("UPDATE conversations SET updated_at = ? WHERE id = ?",
                         (timestamp(conv.updated_at), conv_id))
    return store.get_conversation(conv_id)


def _artifact(store: ConversationStore, conv_id: str, a: dict[str, Any], *,
              message_id: int | None = None, step_id: int | None = None) -> None:
    store.add_artifact(conv_id, str(a["name"]), str(a.get("mime_type") or "text/plain"),
                       str(a.get("content") or ""), message_id=message_id, step_id=step_id,
                       created_at=timestamp(a.get("created_at")))


def _text_or_none(value: Any) -> str | None:
    return None if value is None else str(value)
