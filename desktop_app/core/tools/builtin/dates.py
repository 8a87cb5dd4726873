"""Calendar arithmetic: days between dates, a date plus or minus days, the weekday of a date.

Small models cannot count days across months reliably (the bundled model answered "how many
days between 2026-03-01 and 2026-12-25?" with the dates' own digits), and the calculator
knows no calendar. Dates are read leniently: ISO (2026-03-01), "4 July 2024",
"July 4, 2024", "today", "tomorrow".
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import date, datetime, timedelta
from typing import Any

from desktop_app.core.errors import ToolArgumentError
from desktop_app.core.tools.base import Tool, ToolResult

_MONTHS = {name: number for number, names in enumerate(
    [("january", "jan"), ("february", "feb"), ("march", "mar"), ("april", "apr"), ("may",),
     ("june", "jun"), ("july", "jul"), ("august", "aug"), ("september", "sep", "sept"),
     ("october", "oct"), ("november", "nov"), ("december", "dec")], start=1) for name in names}
_DAY_MONTH = re.compile(r"^(\d{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?([a-z]+)\.?,?\s+(\d{4})$")
_MONTH_DAY = re.compile(r"^([a-z]+)\.?\s+(\d{1,2})(?:st|nd|rd|th)?,?\s+(\d{4})$")


def parse_date(text: str, today: date) -> date:
    """A calendar date from the ways people write one; ``ToolArgumentError`` otherwise."""
    value = " ".join(str(text).strip().lower().split())
    relative = {"today": 0, "now": 0, "tomorrow": 1, "yesterday": -1}
    if value in relative:
        return today + timedelta(days=relative[value])
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
    description = ("Dates: days_between two dates, add_days to a date (negative to go back), "
                   "or the weekday of a date (YYYY-MM-DD)")
    parameters: dict[str, Any] = {
        "type": "object",
        "properties": {
            "operation": {"type": "string", "enum": ["days_between", "add_days", "weekday"]},
            "date": {"type": "string", "description": "YYYY-MM-DD, or 'today'"},
            "end_date": {"type": "string", "description": "second date, for days_between"},
            "days": {"type": "integer", "description": "days to add, for add_days"},
        },
        "required": ["operation", "date"],
        "additionalProperties": False,
    }
    read_only = True

    def __init__(self, today: Callable[[], date] | None = None) -> None:
        # Injectable for tests; the default is the local calendar day.
        self._today = today or (lambda: datetime.now().astimezone().date())

    async def run(self, args: dict[str, Any]) -> ToolResult:
        today = self._today()
        start = parse_date(args["date"], today)
        operation = args["operation"]
        if operation == "weekday":
            return ToolResult(text=f"{start.isoformat()} is a {start:%A}.")
        if operation == "add_days":
            if "days" not in args:
                raise ToolArgumentError("add_days needs 'days' (a whole number).")
            result = start + timedelta(days=int(args["days"]))
            return ToolResult(text=f"{start.isoformat()} + {int(args['days'])} days = "
                                   f"{result.isoformat()} ({result:%A, %d %B %Y}).")
        if not args.get("end_date"):
            raise ToolArgumentError("days_between needs 'end_date'.")
        end = parse_date(args["end_date"], today)
        days = (end - start).days
        # The weekdays come along: asked for the weekday of one date, the bundled model
        # called days_between from that date to itself, and then guessed the day.
        return ToolResult(text=f"From {start.isoformat()} ({start:%A}) to {end.isoformat()} "
                               f"({end:%A}): {days} days.")
