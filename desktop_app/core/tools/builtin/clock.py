"""The current date and time, in any IANA time zone (``zoneinfo``) or named place.

Places are read as people write them, in English, German, Spanish or French ("Tokio",
"München", "Nueva York", "Japón"): see ``place_names`` for the data behind that.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError, available_timezones

from desktop_app.core.tools.base import Tool, ToolResult
from desktop_app.core.tools.builtin.place_names import (
    WORD,
    Place,
    find_place,
    fold,
    suggest_places,
    zones_named_in,
)

#: What models write when they mean "the user's own time" (the bundled model wrote "local"
#: four times in a row when that was an error).
_LOCAL_WORDS = {"local", "localtime", "local time", "local_time", "system", "here", "current",
                "now", "user", "my time", "auto", "default", "none", "null"}


@functools.cache
def _zone_names() -> frozenset[str]:
    """Every IANA zone name (read from the tz database once: it is a walk of its files)."""
    return frozenset(available_timezones())


def _zone_for(name: str) -> str | None:
    """The IANA zone a city or zone name means: 'Tokyo' → 'Asia/Tokyo', 'new york' →
    'America/New_York'; None if no zone's last part is exactly that name."""
    wanted = name.strip().replace(" ", "_").lower()
    matches = [z for z in _zone_names() if z.split("/")[-1].lower() == wanted]
    canonical = [z for z in matches if not z.startswith(("Etc/", "SystemV/", "US/"))]
    return min(canonical or matches, key=len) if matches else None


def _suggest(name: str, limit: int = 3) -> list[str]:
    """Zone names that contain the last part of ``name`` (e.g. 'berlin' → 'Europe/Berlin')."""
    needle = name.replace(" ", "_").split("/")[-1].lower()
    if len(needle) < 3:
        return []
    return sorted(z for z in _zone_names() if needle in z.lower())[:limit]


class ClockTool(Tool):
    """Reports the current date, time, weekday and UTC offset."""

    name = "current_time"
    # No example zone in the text: the bundled model copied one into every call.
    description = "Current date, time and weekday, here or in another city or zone"
    parameters: Mapping[str, Any] = {
        "type": "object",
        "properties": {
            "timezone": {"type": "string",
                         "description": "A city or IANA time zone; leave out for local time"},
        },
        "additionalProperties": False,
    }
    read_only = True
    pure = True

    def __init__(self, now: Callable[[], datetime] | None = None) -> None:
        # Injectable clock so tests are deterministic; the default is the real time.
        self._now = now or (lambda: datetime.now(UTC))

    async def unfounded(self, args: dict[str, Any], conversation: str) -> list[str]:
        """``timezone`` when the conversation names no place in that zone: asked "what day
        is it", the bundled model added New York's zone, and the answer was a day behind.
        A name that resolves to nothing is left for ``run`` to report."""
        name = str(args.get("timezone") or "").strip()
        if not name or name.lower() in _LOCAL_WORDS:
            return []
        # The place index loads data files on first use: off the event loop.
        founded = await asyncio.to_thread(_founded, name, conversation, self._now())
        return [] if founded else ["timezone"]

    async def run(self, args: dict[str, Any]) -> ToolResult:
        zone_name = str(args.get("timezone") or "").strip()
        if zone_name.lower() in _LOCAL_WORDS:
            zone_name = ""
        now = self._now()
        if zone_name:
            # The place index loads data files on first use: off the event loop.
            zone_name, place = await asyncio.to_thread(_resolve, zone_name)
            try:
                zone = ZoneInfo(zone_name)
            except (ZoneInfoNotFoundError, ValueError):
                return ToolResult.failure(await _unknown_place(zone_name))
            local = now.astimezone(zone)
            label = f"{place.label}: {zone_name}" if place else zone_name
        else:
            local = now.astimezone()
            label = local.tzname() or "local time"
        offset = local.strftime("%z")
        offset = f"{offset[:3]}:{offset[3:]}" if offset else ""
        text = (f"{local:%A, %Y-%m-%d %H:%M:%S} ({label}, UTC{offset}); "
                f"ISO 8601: {local.isoformat(timespec='seconds')}")
        return ToolResult(text=text)


def _words(text: str) -> str:
    """The words of ``text`` (any script), folded, one space apart."""
    return " ".join(fold(word) for word in WORD.findall(text))


def _resolve(name: str) -> tuple[str, Place | None]:
    """The zone ``name`` means and the place it was read as (None for a zone's own name):
    an IANA name, a zone's city ('new york'), else a place in any of the four languages
    ('Tokio'). Nothing matching: the name itself, which ``ZoneInfo`` then rejects."""
    if name in _zone_names():
        return name, None
    found = _zone_for(name)
    if found is not None:
        return found, None
    place = find_place(name)
    return (place.zone, place) if place else (name, None)


def _founded(name: str, conversation: str, now: datetime) -> bool:
    """Whether ``conversation`` names the place ``name`` stands for: by its own name (the
    city part of a zone, 'New York' of 'America/New_York', as a whole phrase: 'new' alone
    is a word) or by a place whose clock shows the same time now ('Osaka' for 'Asia/Tokyo',
    'Mumbai' for the old name 'Asia/Calcutta')."""
    said = f" {_words(conversation)} "
    for part in name.split("/")[-1].split(","):
        phrase = _words(part)
        if len(phrase) >= 3 and f" {phrase} " in said:
            return True
    try:
        zone = ZoneInfo(_resolve(name)[0])
    except (ZoneInfoNotFoundError, ValueError):
        return True  # read as nothing: ``run`` says so
    offset = now.astimezone(zone).utcoffset()
    return any(now.astimezone(ZoneInfo(named)).utcoffset() == offset
               for named in zones_named_in(conversation))


async def _unknown_place(name: str) -> str:
    """The error for a name that is neither a zone nor a known place, with suggestions."""
    suggestions = _suggest(name)
    suggestions += [s for s in await asyncio.to_thread(suggest_places, name)
                    if s not in suggestions]
    hint = f" Did you mean: {', '.join(suggestions[:4])}?" if suggestions else ""
    return (f"Unknown time zone '{name}'. Use a city, a country or an IANA name such as "
            f"'Europe/Berlin' or 'UTC'.{hint}")
