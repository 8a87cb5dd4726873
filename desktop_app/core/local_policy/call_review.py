"""Checks of a call a small model chose, before it is made.

Offered tools, the bundled 0.5B model calls one for requests that only need words, and
writes arguments from nowhere: a greeting became ``calculator("2 + 3")``, a grammar fix
``calculator("'They was late yesterday.'")``, a question about the largest planet a date
calculation between two invented dates. Two signs of such a call need no reading of the
request's words, so they hold in every language:

* a pure tool (it only computes from what it is given) was given numbers of which none
  appears in the conversation or in today's date: the model made them up;
* a pure tool, run on arguments that hold no number at all, fails: words were sent to a
  tool that computes ("Australia" to the calculator).

Such a call is not made; the model answers in its own words instead. A call that fails
on numbers from the conversation is a slip on a real task ("18 miles" sent to the
calculator): ``dry_run`` finds it, and the routing policy lets the model choose again
among the other tools (shown the error, it wrote the same call again).

An optional argument that nothing in the conversation supports is left out of a call that
is made (``Tool.unfounded``): asked "what day is it", the model added New York's time zone.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any

from desktop_app.core.agent.arg_repair import checked_arguments
from desktop_app.core.errors import DesktopAppError
from desktop_app.core.llm.types import ChatMessage, ToolCall
from desktop_app.core.tools.base import Tool

#: A number as written in text: digits with at most one decimal point or comma.
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")


def _readings(token: str) -> set[float]:
    """Every value ``token`` may stand for: "1,850" (thousands) and "3,5" (a decimal comma)
    are both read both ways, and each part of "2026-12-06" or "1.2.3" on its own."""
    values: set[float] = set()
    parts = re.split(r"[.,]", token)
    for part in parts:
        values.add(float(part))
    values.add(float("".join(parts)))
    if len(parts) == 2:
        values.add(float(f"{parts[0]}.{parts[1]}"))
    return values


def numbers_in(text: str) -> set[float]:
    values: set[float] = set()
    for match in _NUMBER.finditer(text):
        values |= _readings(match.group())
    return values


def _argument_numbers(value: Any) -> set[float]:
    """The numbers written in an argument value (strings, numbers, lists, objects)."""
    if isinstance(value, bool):
        return set()
    if isinstance(value, int | float):
        return set() if math.isnan(value) else {float(value)}
    if isinstance(value, str):
        return numbers_in(value)
    if isinstance(value, dict):
        return set().union(*(_argument_numbers(v) for v in value.values()))
    if isinstance(value, list):
        return set().union(*(_argument_numbers(v) for v in value))
    return set()


def grounded(arguments: dict[str, Any], messages: Sequence[ChatMessage],
             today: date | None, *, most: bool = False) -> bool:
    """False when the arguments hold numbers and none of them (``most``: fewer than half)
    appears in the conversation or in ``today``'s date (None: today's date does not
    count)."""
    given = _argument_numbers(arguments)
    if not given:
        return True
    known = set() if today is None else {float(today.year), float(today.month),
                                         float(today.day)}
    for message in messages:
        known |= numbers_in(message.content or "")
    found = given & known
    return 2 * len(found) >= len(given) if most else bool(found)


@dataclass(frozen=True)
class Problem:
    """Why a call should not be made: the model should answer in words instead."""

    reason: str


async def review_call(call: ToolCall, tool: Tool, messages: Sequence[ChatMessage],
                      today: date | None = None, *,
                      from_user_only: bool = False) -> Problem | None:
    """Why ``call`` should not be made (see the module's docstring), or None.
    ``from_user_only``: at least half of its numbers must be the conversation's, and
    today's date does not count."""
    if not tool.pure:
        return None
    try:
        arguments = json.loads(call.arguments or "{}")
    except json.JSONDecodeError:
        return None  # the loop reports it to the model as for any call
    if not isinstance(arguments, dict):
        return None
    if _argument_numbers(arguments):
        if grounded(arguments, _conversation(messages),
                    None if from_user_only else today or date.today(), most=from_user_only):
            return None
        return Problem("Too few of the numbers given appear in the conversation."
                       if from_user_only else
                       "None of the numbers given appears in the conversation.")
    return await dry_run(call, tool)


async def dry_run(call: ToolCall, tool: Tool) -> Problem | None:
    """Why ``call`` of a pure tool fails when run, or None when it succeeds (or the tool
    is not pure: nothing may run before the loop runs it). A pure tool only computes from
    what it is given, so running it twice changes nothing."""
    if not tool.pure:
        return None
    try:
        arguments = json.loads(call.arguments or "{}")
        result = await tool.run(checked_arguments(tool, arguments))
    except json.JSONDecodeError:
        return None  # the loop reports it to the model as for any call
    except (DesktopAppError, ValueError, TypeError, ArithmeticError, LookupError) as exc:
        return Problem(str(exc))
    return None if result.ok else Problem(result.error or "The call failed.")


async def without_unfounded(call: ToolCall, tool: Tool,
                            messages: Sequence[ChatMessage]) -> ToolCall:
    """``call`` without the optional arguments that nothing the user or the assistant said
    supports (``Tool.unfounded``: a place the user never named), so the tool's default
    applies (the user's own time zone, say)."""
    try:
        arguments = json.loads(call.arguments or "{}")
    except json.JSONDecodeError:
        return call
    if not isinstance(arguments, dict):
        return call
    # What the user and the assistant said; tool results do not count: the clock's own
    # result reads "UTC+01:00", and the model then asked for "UTC" as if it had been named.
    said = "\n".join(m.content or "" for m in messages if m.role in ("user", "assistant"))
    required = set(tool.parameters.get("required") or [])
    dropped = set(await tool.unfounded(arguments, said)) - required
    if not dropped:
        return call
    kept = {key: value for key, value in arguments.items() if key not in dropped}
    return call.model_copy(update={"arguments": json.dumps(kept, ensure_ascii=False)})


def _conversation(messages: Iterable[ChatMessage]) -> list[ChatMessage]:
    """What the user and the assistant said (the system turn's examples do not count)."""
    return [m for m in messages if m.role != "system"]
