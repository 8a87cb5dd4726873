"""The basic built-in tools: safe calculator, time-zone clock, HTML artifact, default_tools."""

from __future__ import annotations

import math
from datetime import UTC, datetime

import pytest

from desktop_app.core.config.settings import Settings
from desktop_app.core.errors import ToolArgumentError
from desktop_app.core.tools.builtin import (
    CalculatorTool,
    ClockTool,
    HtmlArtifactTool,
    default_tools,
)
from desktop_app.core.tools.builtin.calculator import CalculationError, calculate

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize(("expression", "expected"), [
    ("1234*5678", 7006652), ("2 + 3 * 4", 14), ("(2 + 3) * 4", 20), ("7 // 2", 3),
    ("7 % 3", 1), ("2 ** 10", 1024), ("2^10", 1024), ("-3 + +5", 2), ("10 / 4", 2.5),
    ("sqrt(16)", 4), ("abs(-2.5)", 2.5), ("round(2.567, 2)", 2.57), ("floor(2.7)", 2),
    ("ceil(2.1)", 3), ("min(3, 1, 2)", 1), ("max(3, 1, 2)", 3), ("ln(e)", 1), ("log(100, 10)", 2),
    ("exp(0)", 1), ("6 × 7", 42), ("10**100 // 10**99", 10), ("√12769", 113),
    ("2 * √2.25", 3), ("√(9 + 16)", 5),
])
def test_calculator_arithmetic(expression: str, expected: float) -> None:
    assert calculate(expression) == pytest.approx(expected)


@pytest.mark.parametrize(("expression", "expected"), [
    ("17.5% of 2340", 409.5), ("249 + 19%", 296.31), ("129 - 30%", 90.3),
    ("percent_change(80, 92)", 15), ("percent_change(92, 80)", -13.0434782609),
    ("19% * 249", 47.31), ("50%", 0.5),
    # % between two numbers stays the remainder.
    ("10 % 3", 1), ("100 - 20 % 3", 98), ("(1+2)%2", 1),
])
def test_calculator_percentages(expression: str, expected: float) -> None:
    assert calculate(expression) == pytest.approx(expected)


def test_a_percent_change_from_zero_is_a_clear_error() -> None:
    with pytest.raises(CalculationError, match="old value is 0"):
        calculate("percent_change(0, 5)")


def test_calculator_constants_and_trig() -> None:
    assert calculate("pi") == pytest.approx(math.pi)
    assert calculate("sin(pi / 2)") == pytest.approx(1.0)
    assert calculate("cos(0) + tan(0)") == 1


def test_big_integers_stay_exact() -> None:
    assert calculate("2**200") == 2**200


@pytest.mark.parametrize(("expression", "message"), [
    ("__import__('os').system('echo hi')", "not allowed"),
    ("open('/etc/passwd')", "Unknown function 'open'"),
    ("x + 1", "Unknown name 'x'"),
    ("'a' * 3", "Only numbers"),
    ("[1, 2]", "not allowed"),
    ("(1).__class__", "not allowed"),
    ("1 if 1 else 2", "not allowed"),
    ("lambda: 1", "not allowed"),
    ("9**9**9", "too large"),
    ("99999**999", "more than"),
    ("10.0**400", "too large"),
    ("factorial(100000)", "limited"),
    ("1/0", "Division by zero"),
    ("sqrt(-1)", "sqrt()"),
    ("(-8) ** (1/3)", "not a real number"),
    ("", "empty"),
    ("2 +", "Not a valid expression"),
    ("True + 1", "Only numbers"),
    ("1" * 3000, "longer than"),
])
def test_calculator_refuses_what_it_must(expression: str, message: str) -> None:
    with pytest.raises(CalculationError) as info:
        calculate(expression)
    assert message in str(info.value)


def test_huge_result_from_repeated_multiplication_is_refused() -> None:
    with pytest.raises(CalculationError):
        calculate("(10**1000)*(10**1000)*(10**1000)*(10**1000)*(10**1000)")


async def test_calculator_tool_reports_result_and_errors() -> None:
    tool = CalculatorTool()
    ok = await tool.run({"expression": "1234*5678"})
    assert ok.ok and ok.text == "1234*5678 = 7006652"
    bad = await tool.run({"expression": "1/0"})
    assert not bad.ok and "Division by zero" in (bad.error or "")
    assert tool.read_only
    with pytest.raises(ToolArgumentError):
        tool.validate({"expr": "1"})


def fixed_now() -> datetime:
    return datetime(2026, 7, 1, 12, 30, 0, tzinfo=UTC)


async def test_clock_converts_to_the_requested_zone() -> None:
    result = await ClockTool(now=fixed_now).run({"timezone": "Europe/Berlin"})
    assert result.ok
    assert "Wednesday, 2026-07-01 14:30:00 (Europe/Berlin, UTC+02:00)" in result.text
    assert "2026-07-01T14:30:00+02:00" in result.text


async def test_clock_without_zone_uses_local_time() -> None:
    result = await ClockTool(now=fixed_now).run({})
    assert result.ok and "2026-07-01" in result.text and "ISO 8601" in result.text


async def test_clock_takes_city_names_and_local_words() -> None:
    """Measured on the bundled model: it called current_time with "Tokyo" and "local"."""
    tokyo = await ClockTool(now=fixed_now).run({"timezone": "Tokyo"})
    assert tokyo.ok and "Asia/Tokyo" in tokyo.text
    new_york = await ClockTool(now=fixed_now).run({"timezone": "new york"})
    assert new_york.ok and "America/New_York" in new_york.text
    for word in ("local", "Local time", "system"):
        here = await ClockTool(now=fixed_now).run({"timezone": word})
        assert here.ok, word


async def test_clock_unknown_zone_is_a_clear_error_with_suggestions() -> None:
    result = await ClockTool(now=fixed_now).run({"timezone": "Berlinn"})
    assert not result.ok
    assert "Unknown time zone 'Berlinn'" in (result.error or "")
    assert "Europe/Berlin" in (result.error or "")
    weird = await ClockTool(now=fixed_now).run({"timezone": "../../etc/passwd"})
    assert not weird.ok and "Unknown time zone" in (weird.error or "")


async def test_html_artifact_tool_builds_a_page_artifact() -> None:
    result = await HtmlArtifactTool().run({"title": "Sales <Q3>", "body": "<p>Up 5%</p>"})
    assert result.ok and len(result.artifacts) == 1
    artifact = result.artifacts[0]
    assert artifact.name == "sales-q3.html" and artifact.mime_type == "text/html"
    assert artifact.is_rich
    assert "<title>Sales &lt;Q3&gt;</title>" in artifact.content
    assert "<p>Up 5%</p>" in artifact.content and artifact.content.startswith("<!DOCTYPE html>")
    assert "<p>Up 5%</p>" not in result.text  # the text for the model has no source


async def test_html_artifact_tool_refuses_huge_bodies() -> None:
    result = await HtmlArtifactTool().run({"title": "x", "body": "a" * 300_000})
    assert not result.ok and "limit" in (result.error or "")


def test_default_tools_include_the_basics_and_respect_disabled() -> None:
    names = [tool.name for tool in default_tools()]
    assert {"calculator", "current_time", "create_html_artifact"} <= set(names)
    assert len(names) == len(set(names))
    settings = Settings()
    settings.tools.disabled = ["calculator"]
    assert "calculator" not in [tool.name for tool in default_tools(settings)]


def test_catalog_lines_fit_about_80_characters() -> None:
    for tool in (CalculatorTool(), ClockTool(), HtmlArtifactTool()):
        line = tool.catalog_line()
        assert len(line) <= 80 and not line.endswith("…"), line
