"""Checking an answer (or a note, file or artifact) against what a task expects.

Checks are written so that they cannot pass by luck:

* ``number``: the expected number must appear (within a tolerance), and no *other*
  number of a similar size may appear beside it (``7006652 or 7006653`` fails), except the
  task's own numbers (from the prompt, and 100 when it has a percentage) and intermediate
  results it lists in ``allow``. A
  right number inside a long explanation passes; a wrong one never does.
* ``time_in``: a clock time within ``TIME_SLACK_MINUTES`` of the real time in that zone.
* ``date``/``weekday``: the real date or weekday; another weekday named beside it fails.
* ``contains``/``not_contains``: case-insensitive words; a list inside the list means "any of".
* ``final`` (with ``number``): the expected number is stated as the result: the last of the
  expected and allowed numbers in the answer is the expected one.
* ``not_echo``: the answer is not mostly the request's own words (a summary, a translation).
* ``language``: the answer is written in that language (``en``, ``de``, ``es``, ``fr``), told by
  the function words it uses most.
* Numbers in a task whose ``language`` is not English may use a decimal comma ("42,16").
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from datetime import date, datetime
from typing import Any
from zoneinfo import ZoneInfo

TIME_SLACK_MINUTES = 3
_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august",
           "september", "october", "november", "december")
_NUMBER = re.compile(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")
#: Continental notation: "1.234,56", "42,16", "1 234,5".
_NUMBER_COMMA = re.compile(r"\d{1,3}(?:[. \u00a0\u202f]\d{3})+(?:,\d+)?|\d+(?:,\d+)?")
_TIME = re.compile(r"\b(\d{1,2})[:.h](\d{2})(?::\d{2})?\s*([ap])?\.?\s*m?\b", re.IGNORECASE)

Now = Callable[[], datetime]


def _numbers(text: str, decimal_comma: bool = False) -> list[tuple[float, int]]:
    """Every number written in ``text`` with the decimals it shows (thousands commas, a
    leading minus sign only where it cannot be a hyphen, e.g. not in ``2026-12-25``).
    With ``decimal_comma``, "42,16" is 42.16 where the comma cannot be a thousands one."""
    if decimal_comma and re.search(r"\d,\d{1,2}(?!\d)|\d\.\d{3},\d", text):
        return _comma_numbers(text)
    out = []
    for match in _NUMBER.finditer(text):
        start = match.start()
        if start > 0 and (text[start - 1].isalnum() or text[start - 1] == "_"):
            continue  # part of a word or an identifier ("x2", "B17")
        written = match.group().replace(",", "")
        value = float(written)
        if start > 0 and text[start - 1] in "-−" and (start < 2 or text[start - 2] in " (=\t\n"):
            value = -value
        shown = len(written.split(".")[1]) if "." in written and "e" not in written.lower() else 0
        out.append((value, shown))
    return out


def _comma_numbers(text: str) -> list[tuple[float, int]]:
    out = []
    for match in _NUMBER_COMMA.finditer(text):
        start = match.start()
        if start > 0 and (text[start - 1].isalnum() or text[start - 1] == "_"):
            continue
        written = re.sub(r"[. \u00a0\u202f]", "", match.group()).replace(",", ".")
        value = float(written)
        if start > 0 and text[start - 1] in "-−" and (start < 2 or text[start - 2] in " (=\t\n"):
            value = -value
        shown = len(written.split(".")[1]) if "." in written else 0
        out.append((value, shown))
    return out


def numbers_in(text: str, decimal_comma: bool = False) -> list[float]:
    """Every number written in ``text``."""
    return [value for value, _shown in _numbers(text, decimal_comma)]


def _fmt(value: float) -> str:
    return f"{value:.10f}".rstrip("0").rstrip(".")


def _decimals(value: float) -> int:
    text = f"{value:.10f}".rstrip("0")
    return len(text.split(".")[1]) if "." in text else 0


def _is(value: float, shown: int, expected: float, rel_tol: float, abs_tol: float) -> bool:
    """``value`` is ``expected`` within the tolerance, or rounded to the decimals it shows
    when it shows enough of them (``42.16`` for 42.1648, not ``61`` for 60.7)."""
    if math.isclose(value, expected, rel_tol=rel_tol, abs_tol=abs_tol):
        return True
    return shown >= min(2, _decimals(expected)) and abs(value - expected) <= 0.5 * 10 ** -shown + 1e-9


def check_number(text: str, expected: float, *, prompt: str = "", allow: Sequence[float] = (),
                 rel_tol: float = 1e-9, abs_tol: float = 0.0, final: bool = False,
                 decimal_comma: bool = False) -> str | None:
    """None when ``text`` gives ``expected`` and no competing number; else why not.
    ``final``: of the expected and allowed numbers, the expected one comes last (it is
    stated as the result, not only as a step on the way)."""
    found = _numbers(text, decimal_comma)
    if not any(_is(v, shown, expected, rel_tol, abs_tol) for v, shown in found):
        listed = ", ".join(f"{_fmt(v)}" for v, _ in found[:6]) or "no number"
        return f"expected {_fmt(expected)}, found {listed}"
    known = [*numbers_in(prompt, decimal_comma), *allow]  # the prompt's "3,5 km" is 3.5
    if "%" in prompt:
        known.append(100.0)  # "19 / 100 * 249": the working of any percentage
    low, high = abs(expected) / 10, abs(expected) * 10
    for value, shown in found:
        if _is(value, shown, expected, rel_tol, abs_tol) or any(
                math.isclose(value, k, rel_tol=1e-5, abs_tol=1e-9) for k in known):
            continue
        if expected and low <= abs(value) <= high:
            return f"expected {_fmt(expected)}, but it also says {_fmt(value)}"
    if final and allow:
        roles = [("result" if _is(v, shown, expected, rel_tol, abs_tol) else "step")
                 for v, shown in found
                 if _is(v, shown, expected, rel_tol, abs_tol)
                 or any(math.isclose(v, a, rel_tol=1e-5, abs_tol=1e-9) for a in allow)]
        if roles and roles[-1] != "result":
            return f"{_fmt(expected)} is not given as the result (an intermediate comes last)"
    return None


#: Frequent short words of each language: an answer's language is the one whose words it
#: uses most (enough for a sentence or more; a bare number has no language).
_FUNCTION_WORDS = {
    "en": {"the", "and", "is", "are", "of", "to", "in", "it", "you", "that", "this", "with",
           "for", "not", "a", "an", "be", "your", "i"},
    "de": {"der", "die", "das", "und", "ist", "sind", "nicht", "ich", "es", "ein", "eine",
           "zu", "mit", "für", "auf", "den", "dem", "sie", "du", "uhr", "im", "von", "sich"},
    "es": {"el", "la", "los", "las", "y", "es", "son", "no", "que", "de", "un", "una", "en",
           "con", "por", "para", "del", "se", "su", "lo", "al", "hay", "está"},
    "fr": {"le", "la", "les", "et", "est", "sont", "pas", "que", "de", "un", "une", "en",
           "avec", "pour", "du", "des", "il", "elle", "vous", "ce", "au", "à", "sur", "je"},
}


def answer_language(text: str) -> str | None:
    """The language ``text`` is written in, by its function words (None: too few)."""
    words = re.findall(r"[^\W\d_]+", text.lower())
    counts = {lang: sum(1 for w in words if w in vocabulary)
              for lang, vocabulary in _FUNCTION_WORDS.items()}
    best = max(counts, key=lambda lang: counts[lang])
    return best if counts[best] >= 2 else None


def _shingles(text: str, size: int = 3) -> set[tuple[str, ...]]:
    words = re.findall(r"\w+", text.lower())
    return {tuple(words[i:i + size]) for i in range(max(len(words) - size + 1, 0))}


def is_echo(answer: str, prompt: str) -> bool:
    """The answer is mostly the request's own wording (its word triples found in it)."""
    said = _shingles(answer)
    if not said:
        return False
    copied = len(said & _shingles(prompt)) / len(said)
    return copied >= 0.8


def _times_in(text: str) -> list[int]:
    """Clock times in ``text`` as minutes after midnight (12-hour times converted)."""
    out = []
    for hour_text, minute_text, half in _TIME.findall(text):
        hour, minute = int(hour_text), int(minute_text)
        if minute > 59 or hour > 24:
            continue
        if half:
            if hour > 12:
                continue
            hour = hour % 12 + (12 if half.lower() == "p" else 0)
        out.append((hour % 24) * 60 + minute)
    return out


def check_time(text: str, zone: str, now: Now) -> str | None:
    """None when ``text`` states the current time in ``zone`` (within a few minutes)."""
    current = now().astimezone(ZoneInfo(zone))
    minutes = current.hour * 60 + current.minute
    for found in _times_in(text):
        difference = abs(found - minutes)
        if min(difference, 1440 - difference) <= TIME_SLACK_MINUTES:
            return None
    return f"no time within {TIME_SLACK_MINUTES} min of {current:%H:%M} ({zone})"


def _date_patterns(day: date) -> list[str]:
    month = _MONTHS[day.month - 1]
    names = f"(?:{month}|{month[:3]}\\.?)"
    d = f"0?{day.day}(?:st|nd|rd|th)?"
    return [day.isoformat(), f"\\b{d}\\s+(?:of\\s+)?{names}\\b", f"\\b{names}\\s+{d}\\b",
            f"\\b0?{day.month}/0?{day.day}/{day.year}\\b", f"\\b0?{day.day}\\.0?{day.month}\\.{day.year}\\b"]


def check_date(text: str, expected: date) -> str | None:
    lowered = text.lower()
    if any(re.search(p, lowered) for p in _date_patterns(expected)):
        return None
    return f"expected the date {expected.isoformat()}"


def check_weekday(text: str, expected: str) -> str | None:
    lowered = text.lower()
    named = {w for w in _WEEKDAYS if re.search(rf"\b{w}\b", lowered)}
    if expected not in named:
        return f"expected {expected.capitalize()}"
    others = named - {expected}
    if others:
        return f"expected {expected.capitalize()}, but it also names {', '.join(sorted(others))}"
    return None


def _contains(text: str, needle: str, word: bool) -> bool:
    if word:
        return re.search(rf"(?<![\w]){re.escape(needle)}(?![\w])", text) is not None
    return needle in text


def check_text(text: str, spec: dict[str, Any], *, prompt: str = "",
               now: Now | None = None) -> str | None:
    """Apply every condition of ``spec`` to ``text``; None when all hold, else the first
    reason it fails."""
    clock: Now = now or (lambda: datetime.now().astimezone())
    lowered = text.lower()
    word = bool(spec.get("word"))
    decimal_comma = spec.get("decimal_comma", False)
    for item in spec.get("contains", []):
        options = item if isinstance(item, list) else [item]
        if not any(_contains(lowered, o.lower(), word) for o in options):
            return f"missing {' or '.join(repr(o) for o in options)}"
    if spec.get("cites") and not re.search(r"\[\d{1,3}\]", text):
        return "no citation: the answer does not cite a passage as [n]"
    for item in spec.get("not_contains", []):
        if item.lower() in lowered:
            return f"should not say {item!r}"
    if "number" in spec:
        reason = check_number(text, float(spec["number"]), prompt=prompt,
                              allow=spec.get("allow", ()), rel_tol=spec.get("rel_tol", 1e-9),
                              abs_tol=spec.get("abs_tol", 0.0), final=bool(spec.get("final")),
                              decimal_comma=decimal_comma)
        if reason:
            return reason
    for value in spec.get("numbers", []):
        if not any(_is(n, shown, value, spec.get("rel_tol", 1e-9), spec.get("abs_tol", 0.0))
                   for n, shown in _numbers(text, decimal_comma)):
            return f"missing the number {_fmt(value)}"
    zones = spec.get("time_in", [])
    for zone in [zones] if isinstance(zones, str) else zones:
        reason = check_time(text, zone, clock)
        if reason:
            return reason
    if "date" in spec:
        wanted = (clock().date() if spec["date"] == "today"
                  else date.fromisoformat(spec["date"]))
        reason = check_date(text, wanted)
        if reason:
            return reason
    if "weekday" in spec:
        wanted_day = (_WEEKDAYS[clock().weekday()] if spec["weekday"] == "today"
                      else spec["weekday"].lower())
        reason = check_weekday(text, wanted_day)
        if reason:
            return reason
    lines = [line for line in text.splitlines() if line.strip()]
    if len(lines) < spec.get("min_lines", 0):
        return f"expected at least {spec['min_lines']} lines, got {len(lines)}"
    if len(text.strip()) < spec.get("min_chars", 0):
        return "the answer is (almost) empty"
    if "max_chars" in spec and len(text.strip()) > spec["max_chars"]:
        return f"longer than {spec['max_chars']} characters"
    if spec.get("not_echo") and is_echo(text, prompt):
        return "the answer repeats the request's own words"
    if "language" in spec:
        found = answer_language(text)
        if found != spec["language"]:
            return f"expected an answer in {spec['language']!r}, got {found or 'no clear language'}"
    return None

