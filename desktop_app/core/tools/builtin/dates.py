"""Calendar arithmetic: days between dates, a date plus or minus days, the weekday of a date.

Small models cannot count days across months reliably (the bundled model answered "how many
days between 2026-03-01 and 2026-12-25?" with the dates' own digits), and the calculator
knows no calendar. Dates are read leniently: ISO (2026-03-01), "4 July 2024",
"July 4, 2024", and the relative days of English, German, Spanish and French ("today",
"heute", "mañana", "après-demain") from the Unicode CLDR through Babel.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Mapping
from datetime import date, datetime, timedelta
from typing import Any

from desktop_app.core.errors import ToolArgumentError
from desktop_app.core.tools.base import Tool, ToolResult
from desktop_app.core.tools.builtin.place_names import LANGUAGES, fold

_MONTHS = {name: number for number, names in enumerate(
    [("january", "jan"), ("february", "feb"), ("march", "mar"), ("april", "apr"), ("may",),
     ("june", "jun"), ("july", "jul"), ("august", "aug"), ("september", "sep", "sept"),
     ("october", "oct"), ("november", "nov"), ("december", "dec")], start=1) for name in names}
_DAY_MONTH = re.compile(r"^(\d{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?([a-z]+)\.?,?\s+(\d{4})$")
_MONTH_DAY = re.compile(r"^([a-z]+)\.?\s+(\d{1,2})(?:st|nd|rd|th)?,?\s+(\d{4})$")


#: Used only if Babel's CLDR data has no relative day names (it has, for these languages).
_FALLBACK_RELATIVE = {"today": 0, "tomorrow": 1, "yesterday": -1, "heute": 0, "morgen": 1,
                      "gestern": -1, "hoy": 0, "manana": 1, "ayer": -1, "aujourd'hui": 0,
                      "demain": 1, "hier": -1}


def _relative_key(text: str) -> str:
    return fold(text).replace("\u2019", "'")


@functools.cache
def _relative_days() -> dict[str, int]:
    """Accent-free word → offset in days: 'hoy' → 0, 'manana' → 1, 'vorgestern' → -2."""
    words = {"now": 0}
    try:
        from babel import Locale

        for language in LANGUAGES:
            fields = Locale.parse(language)._data.get("date_fields", {})  # no public API
            for offset, word in ((fields.get("day") or {}).get("relative") or {}).items():
                words.setdefault(_relative_key(str(word)), int(offset))
    except (ImportError, LookupError, ValueError):
        pass
    for word, offset in _FALLBACK_RELATIVE.items():
        words.setdefault(word, offset)
    return words


def parse_date(text: str, today: date) -> date:
    """A calendar date from the ways people write one; ``ToolArgumentError`` otherwise."""
    value = " ".join(str(text).strip().lower().split())
    offset = _relative_days().get(_relative_key(value))
    if offset is not None:
        return today + timedelta(days=offset)
    try:
        return date.fromisoformat(value[:10])
    except ValueError:
        pass
    for pattern, order in ((_DAY_MONTH, (0, 1, 2)), (_MONTH_DAY, (1, 0, 2))):
        match = pattern.match(value)
        if match:
            parts = match.groups()
            day, month_name, year = parts[order[0]], parts[order[1]], parts[order[2]]
            month = _MONTHS.get(month_name)
            if month:
                try:
                    return date(int(year), month, int(day))
                except ValueError as exc:
                    raise ToolArgumentError(f"'{text}' is not a real date ({exc}).") from None
    raise ToolArgumentError(f"Cannot read '{text}' as a date.",
                            hint="Write dates as YYYY-MM-DD, e.g. 2026-03-01.")


class DateCalcTool(Tool):
    """Days between two dates, a date plus/minus days, or the weekday of a date."""

    name = "date_calc"
    description = ("Dates: the days between two dates, a date plus or minus days, or the "
                   "weekday of a date")
    parameters: Mapping[str, Any] = {
        "type": "object",
        "properties": {
            "operation": {"type": "string", "enum": ["days_between", "add_days", "weekday"]},
            "date": {"type": "string", "description": "YYYY-MM-DD, or 'today'"},
            "end_date": {"type": "string", "description": "second date, for days_between"},
            "days": {"type": "integer", "description": "days to add, for add_days"},
        },
        # What to do follows from what is given, so a call with a mistaken "operation" but
        # the right dates still gets its answer (end_date: between; days: add; else weekday).
        "required": ["date"],
        "additionalProperties": False,
    }
    read_only = True
    pure = True

    def __init__(self, today: Callable[[], date] | None = None) -> None:
        # Injectable for tests; the default is the local calendar day.
        self._today = today or (lambda: datetime.now().astimezone().date())

    async def run(self, args: dict[str, Any]) -> ToolResult:
        today = self._today()
        start = parse_date(args["date"], today)
        operation = args.get("operation") or "weekday"
        if args.get("days") is not None:
            operation = "add_days"
        elif args.get("end_date"):
            operation = "days_between"
        if operation == "weekday":
            return ToolResult(text=f"{_named(start, today)} is a {start:%A}.")
        if operation == "add_days":
            if "days" not in args:
                raise ToolArgumentError("add_days needs 'days' (a whole number).")
            result = start + timedelta(days=int(args["days"]))
            return ToolResult(text=f"{_named(start, today)} + {int(args['days'])} days = "
                                   f"{result.isoformat()} ({result:%A, %d %B %Y}).")
        if not args.get("end_date"):
            raise ToolArgumentError("days_between needs 'end_date'.")
        end = parse_date(args["end_date"], today)
        days = (end - start).days
        # The weekdays come along: asked for the weekday of one date, the bundled model
        # called days_between from that date to itself, and then guessed the day.
        return ToolResult(text=f"From {_dated(start, today)} to {_dated(end, today)}: "
                               f"{days} days.")


def _named(day: date, today: date) -> str:
    """'2026-12-03', or '2026-12-03 (today)': the date used, and whether it is today."""
    return f"{day.isoformat()} (today)" if day == today else day.isoformat()


def _dated(day: date, today: date) -> str:
    """'2026-12-03 (Thursday)', with ', today' when it is."""
    return f"{day.isoformat()} ({day:%A}{', today' if day == today else ''})"
