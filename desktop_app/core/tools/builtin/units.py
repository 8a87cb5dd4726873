"""``convert_units``: length, mass, volume, temperature, speed, area, data size and time.

Every unit is a factor to its dimension's base unit (metre, kilogram, litre, m/s, m², byte,
second); temperature is affine and handled separately. Unknown or incompatible units give
an error that names the units that *are* known for that dimension, so a model can retry.
Unit names in German, Spanish and French ("Meilen", "libras", "pieds") and values written
with a decimal comma ("3,5") are read through ``unit_names``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from desktop_app.core.errors import ToolArgumentError
from desktop_app.core.tools.base import Tool, ToolResult
from desktop_app.core.tools.builtin.unit_names import read_number, unit_alias

# dimension -> {unit name or alias: factor to the base unit}
_UNITS: dict[str, dict[str, float]] = {
    "length": {
        "m": 1, "meter": 1, "metre": 1, "km": 1e3, "kilometer": 1e3, "kilometre": 1e3,
        "cm": 1e-2, "centimeter": 1e-2, "mm": 1e-3, "millimeter": 1e-3, "um": 1e-6,
        "micrometer": 1e-6, "nm": 1e-9, "nanometer": 1e-9, "in": 0.0254, "inch": 0.0254,
        "ft": 0.3048, "foot": 0.3048, "feet": 0.3048, "yd": 0.9144, "yard": 0.9144,
        "mi": 1609.344, "mile": 1609.344, "nmi": 1852, "nautical mile": 1852,
    },
    "mass": {
        "kg": 1, "kilogram": 1, "g": 1e-3, "gram": 1e-3, "mg": 1e-6, "milligram": 1e-6,
        "t": 1e3, "tonne": 1e3, "metric ton": 1e3, "lb": 0.45359237, "pound": 0.45359237,
        "lbs": 0.45359237, "oz": 0.028349523125, "ounce": 0.028349523125,
        "st": 6.35029318, "stone": 6.35029318,
    },
    "volume": {
        "l": 1, "liter": 1, "litre": 1, "ml": 1e-3, "milliliter": 1e-3, "millilitre": 1e-3,
        "cl": 1e-2, "dl": 0.1, "m3": 1e3, "cubic meter": 1e3, "cm3": 1e-3, "cc": 1e-3,
        "gal": 3.785411784, "gallon": 3.785411784, "us gallon": 3.785411784,
        "imperial gallon": 4.54609, "qt": 0.946352946, "quart": 0.946352946,
        "pt": 0.473176473, "pint": 0.473176473, "cup": 0.2365882365,
        "fl oz": 0.0295735295625, "fluid ounce": 0.0295735295625,
        "tbsp": 0.01478676478125, "tablespoon": 0.01478676478125,
        "tsp": 0.00492892159375, "teaspoon": 0.00492892159375,
    },
    "speed": {
        "m/s": 1, "mps": 1, "km/h": 1 / 3.6, "kmh": 1 / 3.6, "kph": 1 / 3.6,
        "mph": 0.44704, "mi/h": 0.44704, "ft/s": 0.3048, "knot": 0.514444444, "kn": 0.514444444,
        "kt": 0.514444444, "meters per second": 1, "kilometers per hour": 1 / 3.6,
        "miles per hour": 0.44704,
    },
    "area": {
        "m2": 1, "square meter": 1, "km2": 1e6, "square kilometer": 1e6, "cm2": 1e-4,
        "mm2": 1e-6, "ha": 1e4, "hectare": 1e4, "a": 100, "are": 100, "acre": 4046.8564224,
        "ft2": 0.09290304, "square foot": 0.09290304, "square feet": 0.09290304,
        "in2": 0.00064516, "square inch": 0.00064516, "yd2": 0.83612736, "mi2": 2589988.110336,
        "square mile": 2589988.110336, "sq m": 1, "sq km": 1e6, "sq ft": 0.09290304,
        "sq in": 0.00064516, "sq mi": 2589988.110336,
    },
    "data": {
        "b": 1, "byte": 1, "bit": 0.125, "kb": 1e3, "kilobyte": 1e3, "mb": 1e6, "megabyte": 1e6,
        "gb": 1e9, "gigabyte": 1e9, "tb": 1e12, "terabyte": 1e12, "pb": 1e15,
        "kib": 1024, "kibibyte": 1024, "mib": 1024**2, "mebibyte": 1024**2,
        "gib": 1024**3, "gibibyte": 1024**3, "tib": 1024**4, "tebibyte": 1024**4,
        "kbit": 125, "mbit": 125e3, "gbit": 125e6,
    },
    "time": {
        "s": 1, "sec": 1, "second": 1, "ms": 1e-3, "millisecond": 1e-3, "us": 1e-6,
        "microsecond": 1e-6, "ns": 1e-9, "nanosecond": 1e-9, "min": 60, "minute": 60,
        "h": 3600, "hr": 3600, "hour": 3600, "d": 86400, "day": 86400, "wk": 604800,
        "week": 604800, "fortnight": 1209600, "month": 2629746, "yr": 31556952,
        "year": 31556952,  # Gregorian mean month and year
    },
}
_TEMPERATURE = {"c": "C", "celsius": "C", "degc": "C", "°c": "C", "f": "F", "fahrenheit": "F",
                "degf": "F", "°f": "F", "k": "K", "kelvin": "K", "r": "R", "rankine": "R"}
# Case matters only where lower-casing would merge two units (megabit vs megabyte).
_CASE_SENSITIVE = {"Mb": ("data", 125e3), "Gb": ("data", 125e6), "Kb": ("data", 125),
                   "Tb": ("data", 125e9)}


def _normalise(unit: str) -> str:
    text = " ".join(unit.strip().replace("²", "2").replace("³", "3").replace("µ", "u").split())
    lowered = text.lower()
    lowered = lowered.removeprefix("degrees ")
    if lowered not in _ALL and len(lowered) > 3:  # plurals: "miles", "hours", "inches"
        for suffix in ("s", "es"):
            if lowered.endswith(suffix) and lowered[: -len(suffix)] in _ALL:
                return lowered[: -len(suffix)]
    return lowered


_ALL = {name for table in _UNITS.values() for name in table} | set(_TEMPERATURE)


def _lookup(unit: str) -> tuple[str, float | str]:
    """(dimension, factor) for a unit, or ("temperature", "C"/"F"/"K"/"R")."""
    if unit.strip() in _CASE_SENSITIVE:
        return _CASE_SENSITIVE[unit.strip()]
    key = _normalise(unit)
    if key in _TEMPERATURE:
        return "temperature", _TEMPERATURE[key]
    for dimension, table in _UNITS.items():
        if key in table:
            return dimension, table[key]
    alias = unit_alias(unit)  # "millas", "Pfund", "grados Fahrenheit"
    if alias is not None:
        return _lookup(alias)
    raise ToolArgumentError(
        f"Unknown unit '{unit}'.",
        hint="Known dimensions: " + "; ".join(
            f"{dim}: {', '.join(sorted(k for k in table if len(k) <= 4)[:12])}"
            for dim, table in _UNITS.items()) + "; temperature: C, F, K.")


def _to_kelvin(value: float, scale: str) -> float:
    return {"C": value + 273.15, "F": (value - 32) * 5 / 9 + 273.15, "K": value,
            "R": value * 5 / 9}[scale]


def _from_kelvin(value: float, scale: str) -> float:
    return {"C": value - 273.15, "F": (value - 273.15) * 9 / 5 + 32, "K": value,
            "R": value * 9 / 5}[scale]


_BARE_DEGREES = {"degree", "degrees", "deg", "°", "grad", "grados", "degrés", "degres"}


def _bare_degrees(from_unit: str, to_unit: str) -> tuple[str, str]:
    """"degrees" → "fahrenheit" means Celsius to Fahrenheit (and the other way round): a
    bare degree beside one everyday scale is the other one (models write it so)."""
    other = {"C": "F", "F": "C"}
    pair = [from_unit, to_unit]
    for index in (0, 1):
        if pair[index].strip().lower() in _BARE_DEGREES:
            known = _TEMPERATURE.get(_normalise(pair[1 - index]))
            if known in other:
                pair[index] = other[known]
    return pair[0], pair[1]


def convert(value: float, from_unit: str, to_unit: str) -> float:
    """Convert ``value`` between two units of the same dimension; raise on a mismatch."""
    if not math.isfinite(value):
        raise ToolArgumentError(f"The value {value} is not a finite number.")
    from_unit, to_unit = _bare_degrees(from_unit, to_unit)
    src_dim, src = _lookup(from_unit)
    dst_dim, dst = _lookup(to_unit)
    if src_dim != dst_dim:
        raise ToolArgumentError(
            f"Cannot convert {src_dim} ('{from_unit}') to {dst_dim} ('{to_unit}').",
            hint="Both units must measure the same thing, e.g. km → mi or °C → °F.")
    if src_dim == "temperature":
        kelvin = _to_kelvin(value, str(src))
        if kelvin < -1e-9:
            raise ToolArgumentError(f"{value} {from_unit} is below absolute zero.")
        return _from_kelvin(kelvin, str(dst))
    return value * float(src) / float(dst)


def format_quantity(number: float) -> str:
    """A number as the converter writes it (thousands separated from 10,000 on)."""
    if number == 0:
        return "0"
    if abs(number) >= 1e15 or abs(number) < 1e-6:
        return f"{number:.6g}"
    return f"{number:,.10g}" if abs(number) >= 1e4 else f"{number:.10g}"


def _value(raw: Any) -> float:
    """The number to convert: a number, or text such as "3,5" or "1.234,5" (see
    ``read_number`` for which separators are read how)."""
    if isinstance(raw, int | float) and not isinstance(raw, bool):
        return float(raw)
    number = read_number(str(raw))
    if number is None:
        raise ToolArgumentError(f"'{raw}' is not a number.", hint="Give the value as digits, "
                                "e.g. 3.5 or 1234.")
    return number


class UnitConvertTool(Tool):
    """Converts a number between units of length, mass, volume, temperature and more."""

    name = "convert_units"
    description = ("Convert a value between units: km/miles/feet/metres, kg/lb/oz, °C/°F, "
                   "litres/gallons, km/h/mph, area, data sizes, time")
    parameters: Mapping[str, Any] = {
        "type": "object",
        "properties": {
            "value": {"type": "number"},
            "from_unit": {"type": "string", "description": "The unit the value is in"},
            "to_unit": {"type": "string", "description": "The unit wanted, of the same kind"},
        },
        "required": ["value", "from_unit", "to_unit"],
        "additionalProperties": False,
    }
    pure = True

    async def run(self, args: dict[str, Any]) -> ToolResult:
        value = _value(args["value"])
        result = convert(value, args["from_unit"], args["to_unit"])
        return ToolResult(text=f"{format_quantity(value)} {args['from_unit']} = "
                               f"{format_quantity(result)} {args['to_unit']}")
