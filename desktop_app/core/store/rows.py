"""SQL column lists and row -> record conversion, shared by the store's modules.

Rows are plain tuples (``sqlite3.Row`` costs noticeably more when a conversation of
10,000 messages is opened), so every SELECT uses these column lists in this order.
"""

from __future__ import annotations

import json
from typing import Any

from desktop_app.core.store.records import (
    ArtifactRecord,
    Conversation,
    Interrupt,
    Message,
    Timings,
    ToolStep,
)

CONVERSATION_COLUMNS = (
    "c.id, c.title, c.model, c.mode, c.created_at, c.updated_at, c.pinned, c.archived, "
    "c.deleted_at, (SELECT COUNT(*) FROM messages m WHERE m.conversation_id = c.id), "
    "c.assistant, c.chat_options")

MESSAGE_COLUMNS = (
    "id, conversation_id, role, content, created_at, status, reasoning, model, "
    "prompt_tokens, completion_tokens, ttft, elapsed, tokens_per_second, error, pinned, "
    "tool_calls, tool_call_id, name, prompt_tokens_per_second, iterations, cut, plan")

STEP_COLUMNS = "id, message_id, iteration, tool, args, observation, error, elapsed, created_at"

ARTIFACT_COLUMNS = ("id, conversation_id, name, mime_type, content, created_at, message_id, "
                    "step_id")

INTERRUPT_COLUMNS = ("id, conversation_id, message_id, content, status, created_at, "
                     "run_message_id")

_NO_TIMINGS = Timings()


#: Stored times are believed between 1970 and 2100; anything else reads as 0 (1970).
_LATEST_TIME = 4_102_444_800.0


def stored_time(value: Any) -> float:
    """A stored time as seconds: a database written by an older import may hold text
    ("yesterday") or 10^30 there, and each listing of the conversations then failed."""
    if type(value) is float and 0.0 <= value <= _LATEST_TIME:
        return value  # the usual case, first: this runs for every message read
    if isinstance(value, int | float) and not isinstance(value, bool) \
            and 0 <= value <= _LATEST_TIME:
        return float(value)
    return 0.0


def conversation(row: tuple[Any, ...]) -> Conversation:
    return Conversation(id=row[0], title=row[1], model=row[2], mode=row[3],
                        created_at=stored_time(row[4]), updated_at=stored_time(row[5]),
                        pinned=bool(row[6]), archived=bool(row[7]),
                        deleted_at=row[8], message_count=int(row[9]), assistant=row[10],
                        chat_options=_json_object(row[11]))


def _json_object(text: str | None) -> dict[str, Any]:
    try:
        value = json.loads(text or "{}")
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def message(row: tuple[Any, ...], steps: list[ToolStep] | None = None) -> Message:
    # Positional arguments in field order: this runs 10,000 times when a long conversation
    # opens, and keyword passing measured noticeably slower.
    ttft, elapsed, tps, prompt_tps, iterations = row[10], row[11], row[12], row[18], row[19]
    cut = row[20]
    timings = _NO_TIMINGS if (ttft is None and elapsed is None and tps is None
                              and iterations is None and cut is None) else Timings(
        ttft, elapsed, tps, prompt_tps, iterations, cut)
    return Message(row[0], row[1], row[2], row[3], stored_time(row[4]), row[5], row[6], row[7], row[8],
                   row[9], timings, row[13], bool(row[14]),
                   json.loads(row[15]) if row[15] else [], row[16], row[17],
                   steps if steps is not None else [], _json_list(row[21]))


def _json_list(text: str | None) -> list[dict[str, Any]]:
    if not text:
        return []
    try:
        value = json.loads(text)
    except ValueError:
        return []
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


def decode_args(text: str) -> Any:
    """Tool arguments are stored as JSON; a model's malformed arguments are kept as text."""
    try:
        return json.loads(text)
    except ValueError:
        return text


def encode_args(args: Any) -> str:
    if isinstance(args, str):
        # Already JSON (the provider's raw arguments) or free text: store valid JSON either way.
        try:
            json.loads(args)
            return args
        except ValueError:
            return json.dumps(args, ensure_ascii=False)
    return json.dumps(args, ensure_ascii=False, default=str)


def step(row: tuple[Any, ...]) -> ToolStep:
    return ToolStep(id=row[0], message_id=row[1], iteration=row[2], tool=row[3],
                    args=decode_args(row[4]), observation=row[5], error=row[6],
                    elapsed=row[7], created_at=stored_time(row[8]))


def artifact(row: tuple[Any, ...]) -> ArtifactRecord:
    return ArtifactRecord(id=row[0], conversation_id=row[1], name=row[2], mime_type=row[3],
                          content=row[4], created_at=stored_time(row[5]), message_id=row[6],
                          step_id=row[7])


def interrupt(row: tuple[Any, ...]) -> Interrupt:
    return Interrupt(id=row[0], conversation_id=row[1], message_id=row[2], content=row[3],
                     status=row[4], created_at=row[5], run_message_id=row[6])


#: Characters of the first question a conversation is named after.
AUTO_TITLE_LENGTH = 60


def auto_title(content: str) -> str:
    """The title a conversation gets from its first question (its first line, cut)."""
    first_line = next((line.strip() for line in content.splitlines() if line.strip()), "")
    if len(first_line) <= AUTO_TITLE_LENGTH:
        return first_line
    return first_line[:AUTO_TITLE_LENGTH - 1].rstrip() + "…"
