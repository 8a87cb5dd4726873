"""When a reply of tool calls written as bare JSON objects, one a line, is complete.

``ToolCallSniffer.complete()`` asks this while a reply streams, so that generation stops
once the model has written what it will do and goes on with something else.
"""

from __future__ import annotations

import json
import re
from typing import Any

from desktop_app.core.llm.types import ToolCall

#: The keys under which models put a call's arguments.
ARG_KEYS = ("arguments", "parameters", "args")

#: How a JSON call starts (its first key), and how much of it shows that.
_CALL_START = re.compile(r'\{\s*"(?:name|function|type|id|tool)"')
_CALL_START_CHARS = 16


def bare_calls_done(head: str, made: set[tuple[str, str]]) -> bool:
    """``complete()`` for calls written as bare JSON objects, one per line."""
    decoder = json.JSONDecoder()
    seen: list[Any] = []
    start = 0
    while True:
        try:
            value, end = decoder.raw_decode(head, start)
        except ValueError:
            # Still being written, unless, after a call, its start shows it is no call:
            # JSON written after a call (a file listing) ran to the token limit. (The
            # first object may be the answer, JSON the user asked for: it is not cut.)
            written = head[start:]
            return (start > 0 and len(written) >= _CALL_START_CHARS
                    and not _CALL_START.match(written))
        if value in seen:
            return True
        seen.append(value)
        rest = head[end:]
        if "\n" not in rest or not rest.strip():
            return False
        following = rest.lstrip()
        if not following.startswith("{") or _as_key(value) not in made:
            return True
        start = len(head) - len(following)


def _as_key(value: Any) -> tuple[str, str] | None:
    """A decoded call object as (name, canonical arguments), or None if it is not one."""
    if not isinstance(value, dict) or not isinstance(value.get("name"), str):
        return None
    arguments: Any = next((value[k] for k in ARG_KEYS if k in value), {})
    return value["name"], json.dumps(arguments, sort_keys=True)


def call_key(call: ToolCall) -> tuple[str, str] | None:
    """A call made earlier as (name, canonical arguments); None if its arguments are not
    JSON (nothing written later can be the same call then)."""
    try:
        arguments = json.loads(call.arguments or "{}")
    except json.JSONDecodeError:
        return None
    return call.name, json.dumps(arguments, sort_keys=True)
