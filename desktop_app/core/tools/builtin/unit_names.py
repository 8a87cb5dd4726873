"""Unit names and numbers as people write them in English, German, Spanish and French.

Unit names come from the Unicode CLDR through Babel: each language's display name of a unit
("Meilen", "kilómetros") and the singular and plural forms of its long pattern
("{0} libra" / "{0} libras", "{0} Grad Celsius"). ``_CLDR_UNITS`` maps CLDR unit ids to the
converter's own unit names; the table of names is built once, on first use.
"""

from __future__ import annotations

import re
import threading

from desktop_app.core.tools.builtin.place_names import LANGUAGES, fold

#: CLDR unit id → the unit name ``units.py`` knows. Units CLDR has but the converter does not
#: (furlongs, US short tons, imperial pints) are left out, so their names stay unknown.
_CLDR_UNITS = {
    "length-kilometer": "km", "length-meter": "m", "length-centimeter": "cm",
    "length-millimeter": "mm", "length-micrometer": "um", "length-nanometer": "nm",
    "length-mile": "mi", "length-yard": "yd", "length-foot": "ft", "length-inch": "in",
    "length-nautical-mile": "nmi",
    "mass-tonne": "t", "mass-kilogram": "kg", "mass-gram": "g", "mass-milligram": "mg",
    "mass-stone": "st", "mass-pound": "lb", "mass-ounce": "oz",
    "volume-liter": "l", "volume-deciliter": "dl", "volume-centiliter": "cl",
    "volume-milliliter": "ml", "volume-cubic-meter": "m3", "volume-cubic-centimeter": "cm3",
    "volume-gallon": "gal", "volume-gallon-imperial": "imperial gallon", "volume-quart": "qt",
    "volume-pint": "pt", "volume-cup": "cup", "volume-fluid-ounce": "fl oz",
    "volume-tablespoon": "tbsp", "volume-teaspoon": "tsp",
    "speed-kilometer-per-hour": "km/h", "speed-meter-per-second": "m/s",
    "speed-mile-per-hour": "mph", "speed-knot": "knot",
    "area-square-kilometer": "km2", "area-square-meter": "m2", "area-square-centimeter": "cm2",
    "area-hectare": "ha", "area-acre": "acre", "area-square-foot": "ft2",
    "area-square-inch": "in2", "area-square-yard": "yd2", "area-square-mile": "mi2",
    "digital-byte": "byte", "digital-bit": "bit", "digital-kilobyte": "kb",
    "digital-megabyte": "mb", "digital-gigabyte": "gb", "digital-terabyte": "tb",
    "digital-petabyte": "pb", "digital-kilobit": "kbit", "digital-megabit": "mbit",
    "digital-gigabit": "gbit",
    "duration-second": "s", "duration-millisecond": "ms", "duration-microsecond": "us",
    "duration-nanosecond": "ns", "duration-minute": "min", "duration-hour": "h",
    "duration-day": "d", "duration-week": "week", "duration-fortnight": "fortnight",
    "duration-month": "month", "duration-year": "year",
    "temperature-celsius": "celsius", "temperature-fahrenheit": "fahrenheit",
    "temperature-kelvin": "kelvin", "temperature-rankine": "rankine",
}

_lock = threading.Lock()
_names: dict[str, str] | None = None


def _build() -> dict[str, str]:
    from babel import Locale  # imported here: loading CLDR data is only needed on a miss

    names: dict[str, str] = {}
    clashes: set[str] = set()
    for language in LANGUAGES:
        locale = Locale.parse(language)
        displays = locale.unit_display_names
        patterns = locale._data.get("unit_patterns", {})  # CLDR's plural forms, no public API
        for cldr_id, unit in _CLDR_UNITS.items():
            # Only the long forms: short and narrow ones are symbols ("mi", "°"), some shared.
            forms = [(displays.get(cldr_id) or {}).get("long")]
            forms += list(((patterns.get(cldr_id) or {}).get("long") or {}).values())
            for form in forms:
                key = fold(str(form or "").replace("{0}", ""))
                if not key or key.startswith("/") or " per " in f" {key} ":
                    continue
                if names.get(key, unit) != unit:
                    clashes.add(key)  # one word for two units: better unknown than wrong
                names.setdefault(key, unit)
    for key in clashes:
        names.pop(key, None)
    return names


def unit_alias(text: str) -> str | None:
    """The converter's name for a unit written in en/de/es/fr ('Meilen' → 'mi'), or None."""
    global _names
    with _lock:
        if _names is None:
            _names = _build()
    return _names.get(fold(text))


_GROUPED_COMMA = re.compile(r"^\d{1,3}(,\d{3})+(\.\d+)?$")  # 1,234 / 1,234.5
_GROUPED_DOT = re.compile(r"^\d{1,3}(\.\d{3})+(,\d+)?$")  # 1.234,5 / 1.234.567
_GROUPED_SPACE = re.compile(r"^\d{1,3}( \d{3})+([.,]\d+)?$")  # 1 234,5 (French)
_DECIMAL_COMMA = re.compile(r"^\d+,\d{1,2}$")  # 3,5 / 12,75
_PLAIN = re.compile(r"^(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$")


def read_number(text: str) -> float | None:
    """A number as written in English or continental European style, or None.

    "3,5" → 3.5 and "1.234,5" → 1234.5 (decimal comma); "1,234.5" → 1234.5 (thousands
    comma); "1 234,5" → 1234.5. A comma followed by exactly three digits ("1,234") is
    ambiguous: English means one thousand two hundred and thirty-four, German one point two
    three four. It is read as thousands, as before, because an amount given to a tool is far
    more often whole than written with exactly three decimals. For the same reason "1.234"
    on its own stays 1.234: a dot is a decimal point unless a decimal comma follows or the
    dots group digits in threes twice ("1.234.567").
    """
    raw = " ".join(str(text).replace("\u00a0", " ").replace("\u202f", " ").split())
    raw = raw.replace("_", "").replace("\u2212", "-")
    sign = -1.0 if raw.startswith("-") else 1.0
    body = raw.lstrip("+-") if raw[:1] in ("+", "-") else raw
    if _GROUPED_SPACE.match(body):
        body = body.replace(" ", "")
        body = body.replace(",", ".")  # grouped by spaces, so a comma is a decimal comma
    if _PLAIN.match(body):
        value = body
    elif _GROUPED_COMMA.match(body):
        value = body.replace(",", "")
    elif _GROUPED_DOT.match(body) and ("," in body or body.count(".") > 1):
        value = body.replace(".", "").replace(",", ".")
    elif _DECIMAL_COMMA.match(body):
        value = body.replace(",", ".")
    else:
        return None
    return sign * float(value)
