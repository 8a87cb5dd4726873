"""Places, units, numbers and days as people write them in English, German, Spanish, French."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest

from desktop_app.core.tools.builtin.clock import ClockTool
from desktop_app.core.tools.builtin.dates import DateCalcTool
from desktop_app.core.tools.builtin.place_names import find_place
from desktop_app.core.tools.builtin.unit_names import read_number
from desktop_app.core.tools.builtin.units import UnitConvertTool, convert

pytestmark = pytest.mark.anyio


def fixed_now() -> datetime:
    return datetime(2026, 7, 1, 12, 30, 0, tzinfo=UTC)


@pytest.mark.parametrize(("name", "zone"), [
    ("Tokio", "Asia/Tokyo"),
    ("Munich", "Europe/Berlin"),
    ("München", "Europe/Berlin"),
    ("Múnich", "Europe/Berlin"),
    ("Nueva York", "America/New_York"),
    ("Londres", "Europe/London"),
    ("San Francisco", "America/Los_Angeles"),
    ("Pékin", "Asia/Shanghai"),  # the French spelling, although a town "Pekin" exists
    ("Japón", "Asia/Tokyo"),  # a country: its most populous city's zone
    ("Deutschland", "Europe/Berlin"),
])
async def test_clock_reads_places_in_four_languages(name: str, zone: str) -> None:
    result = await ClockTool(now=fixed_now).run({"timezone": name})
    assert result.ok, result.error
    assert f"{zone}, UTC" in result.text


async def test_clock_names_the_place_it_resolved() -> None:
    result = await ClockTool(now=fixed_now).run({"timezone": "Tokio"})
    assert result.text.startswith("Wednesday, 2026-07-01 21:30:00 (Tokyo, Japan: Asia/Tokyo, "
                                  "UTC+09:00)")
    # IANA names are shown as before.
    berlin = await ClockTool(now=fixed_now).run({"timezone": "Europe/Berlin"})
    assert "(Europe/Berlin, UTC+02:00)" in berlin.text


async def test_clock_unknown_place_suggests_a_spelling() -> None:
    result = await ClockTool(now=fixed_now).run({"timezone": "Tokoi"})
    assert not result.ok
    assert "Unknown time zone 'Tokoi'" in (result.error or "")
    assert "Tokyo" in (result.error or "")


def test_place_lookup_ignores_case_and_accents() -> None:
    munich = find_place("MUNCHEN")
    assert munich is not None and munich.zone == "Europe/Berlin"
    assert find_place("Qwxzv Plorb") is None


@pytest.mark.parametrize(("value", "src", "dst", "expected"), [
    (5, "millas", "kilómetros", 8.04672),
    (5, "Meilen", "Kilometer", 8.04672),
    (8.04672, "kilomètres", "miles", 5),
    (1, "libras", "kilogramos", 0.45359237),
    (1, "Pfund", "Gramm", 453.59237),
    (16, "onzas", "libras", 1),
    (3, "pieds", "mètres", 0.9144),
    (1, "Fuß", "Zoll", 12),
    (1, "galones", "litros", 3.785411784),
    (100, "Grad Celsius", "grados Fahrenheit", 212),
    (2, "Stunden", "minutos", 120),
])
def test_unit_names_in_four_languages(value: float, src: str, dst: str,
                                      expected: float) -> None:
    assert convert(value, src, dst) == pytest.approx(expected, rel=1e-8)


@pytest.mark.parametrize(("text", "expected"), [
    ("3,5", 3.5), ("1.234,5", 1234.5), ("1,234.5", 1234.5), ("1,234", 1234),
    ("1 234,5", 1234.5), ("-2,25", -2.25), ("1.5", 1.5), ("2e3", 2000),
])
def test_numbers_in_either_convention(text: str, expected: float) -> None:
    assert read_number(text) == pytest.approx(expected)


def test_text_that_is_no_number_is_refused() -> None:
    assert read_number("ten") is None and read_number("3,5000") is None


async def test_convert_tool_reads_a_decimal_comma() -> None:
    result = await UnitConvertTool().run({"value": "3,5", "from_unit": "km",
                                          "to_unit": "millas"})
    assert result.text == "3.5 km = 2.174799173 millas"


async def test_date_calc_counts_from_today_in_any_language() -> None:
    tool = DateCalcTool(today=lambda: date(2026, 12, 3))
    result = await tool.run({"operation": "days_between", "date": "today",
                             "end_date": "2027-01-01"})
    assert result.text == "From 2026-12-03 (Thursday, today) to 2027-01-01 (Friday): 29 days."
    for word, expected in (("heute", "2026-12-03"), ("hoy", "2026-12-03"),
                           ("aujourd'hui", "2026-12-03"), ("aujourd’hui", "2026-12-03"),
                           ("morgen", "2026-12-04"), ("mañana", "2026-12-04"),
                           ("manana", "2026-12-04"), ("demain", "2026-12-04"),
                           ("yesterday", "2026-12-02"), ("übermorgen", "2026-12-05")):
        weekday = await tool.run({"operation": "weekday", "date": word})
        assert weekday.text.startswith(expected), word


def test_a_bare_degree_beside_one_scale_is_the_other_scale() -> None:
    from desktop_app.core.tools.builtin.units import convert

    assert convert(180, "degrees", "fahrenheit") == pytest.approx(356)
    assert convert(98.6, "°F", "degrees") == pytest.approx(37)
