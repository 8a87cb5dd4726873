"""The date tool: exact calendar arithmetic the model can lean on."""

from __future__ import annotations

from datetime import date

import pytest

from desktop_app.core.tools.base import ToolArgumentError
from desktop_app.core.tools.builtin.dates import DateCalcTool

pytestmark = pytest.mark.anyio

TOOL = DateCalcTool(today=lambda: date(2026, 12, 3))


async def test_days_between_names_both_weekdays() -> None:
    result = await TOOL.run({"operation": "days_between", "date": "2026-03-01",
                             "end_date": "2026-12-25"})
    assert result.text == "From 2026-03-01 (Sunday) to 2026-12-25 (Friday): 299 days."
    # The bundled model asked for a weekday this way: the answer is in the result.
    same = await TOOL.run({"operation": "days_between", "date": "2024-07-04",
                           "end_date": "2024-07-04"})
    assert "(Thursday)" in same.text and ": 0 days." in same.text


async def test_add_days_and_weekday_and_today() -> None:
    added = await TOOL.run({"operation": "add_days", "date": "2026-11-15", "days": 90})
    assert added.text.startswith("2026-11-15 + 90 days = 2027-02-13 (Saturday")
    weekday = await TOOL.run({"operation": "weekday", "date": "today"})
    assert weekday.text == "2026-12-03 (today) is a Thursday."


async def test_missing_arguments_say_what_is_needed() -> None:
    with pytest.raises(ToolArgumentError, match="end_date"):
        await TOOL.run({"operation": "days_between", "date": "2026-01-01"})
    with pytest.raises(ToolArgumentError, match="days"):
        await TOOL.run({"operation": "add_days", "date": "2026-01-01"})
