"""Unit conversion: each dimension, aliases and plurals, and clear errors."""

from __future__ import annotations

import pytest

from desktop_app.core.errors import ToolArgumentError
from desktop_app.core.tools.builtin.units import UnitConvertTool, convert

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize(("value", "src", "dst", "expected"), [
    (1, "mile", "km", 1.609344),
    (3, "inches", "cm", 7.62),
    (5, "ft", "m", 1.524),
    (1, "lb", "g", 453.59237),
    (2, "kilograms", "pounds", 4.40924524),
    (1, "gallon", "l", 3.785411784),
    (250, "ml", "cup", 1.05668821),
    (100, "°C", "°F", 212.0),
    (32, "F", "C", 0.0),
    (0, "K", "celsius", -273.15),
    (-40, "degrees Fahrenheit", "degrees Celsius", -40.0),
    (100, "km/h", "mph", 62.1371192),
    (10, "m/s", "km/h", 36.0),
    (1, "acre", "m²", 4046.8564224),
    (1, "ha", "m2", 10_000),
    (1, "GiB", "MB", 1073.741824),
    (1, "MB", "KiB", 976.5625),
    (100, "Mb", "MB", 12.5),  # megabits are not megabytes
    (2, "hours", "min", 120),
    (1, "week", "s", 604_800),
])
def test_conversions(value: float, src: str, dst: str, expected: float) -> None:
    assert convert(value, src, dst) == pytest.approx(expected, rel=1e-8)


def test_incompatible_units_name_both_dimensions() -> None:
    with pytest.raises(ToolArgumentError, match=r"Cannot convert length \('km'\) to mass \('kg'\)"):
        convert(1, "km", "kg")


def test_unknown_unit_lists_known_ones() -> None:
    with pytest.raises(ToolArgumentError, match="Unknown unit 'furlong'") as info:
        convert(1, "furlong", "m")
    assert "length:" in str(info.value) and "temperature" in str(info.value)


def test_below_absolute_zero_is_refused() -> None:
    with pytest.raises(ToolArgumentError, match="absolute zero"):
        convert(-300, "C", "K")


async def test_tool_output_is_readable() -> None:
    result = await UnitConvertTool().run({"value": 10, "from_unit": "km", "to_unit": "mi"})
    assert result.text == "10 km = 6.213711922 mi"


async def test_tool_large_numbers_use_separators() -> None:
    result = await UnitConvertTool().run({"value": 5, "from_unit": "km", "to_unit": "mm"})
    assert result.text == "5 km = 5,000,000 mm"


def test_schema_requires_a_number() -> None:
    with pytest.raises(ToolArgumentError):
        UnitConvertTool().validate({"value": "ten", "from_unit": "km", "to_unit": "mi"})
