"""The current date and time, in any IANA time zone (``zoneinfo``)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError, available_timezones

from desktop_app.core.tools.base import Tool, ToolResult

#: What models write when they mean "the user's own time" (the bundled model wrote "local"
#: four times in a row when that was an error).
_LOCAL_WORDS = {"local", "localtime", "local time", "local_time", "system", "here", "current",
                "now", "user", "my time", "auto", "default", "none", "null"}


def _zone_for(name: str) -> str | None:
    """The IANA zone a city or zone name means: 'Tokyo' → 'Asia/Tokyo', 'new york' →
    'America/New_York'; None if no zone's last part is exactly that name."""
    wanted = name.strip().replace(" ", "_").lower()
    matches = [z for z in available_timezones() if z.split("/")[-1].lower() == wanted]
    canonical = [z for z in matches if not z.startswith(("Etc/", "SystemV/", "US/"))]
    return sorted(canonical or matches, key=len)[0] if matches else None


def _suggest(name: str, limit: int = 3) -> list[str]:
    """Zone names that contain the last part of ``name`` (e.g. 'berlin' → 'Europe/Berlin')."""
    needle = name.replace(" ", "_").split("/")[-1].lower()
    if not needle:
        return []
    return sorted(z for z in available_timezones() if needle in z.lower())[:limit]


class ClockTool(Tool):
    """Reports the current date, time, weekday and UTC offset."""

    name = "current_time"
    # No example zone in the text: the bundled model copied one into every call.
    description = "Current date, time and weekday, here or in another city or zone"
    parameters: dict[str, Any] = {
        "type": "object",
        "properties": {
            "timezone": {"type": "string",
                         "description": "A city or IANA time zone; leave out for local time"},
        },
        "additionalProperties": False,
    }
    read_only = True

    def __init__(self, now: Callable[[], datetime] | None = None) -> None:
        # Injectable clock so tests are deterministic; the default is the real time.
        self._now = now or (lambda: datetime.now(UTC))

    async def run(self, args: dict[str, Any]) -> ToolResult:
        zone_name = str(args.get("timezone") or "").strip()
        if zone_name.lower() in _LOCAL_WORDS:
            zone_name = ""
        now = self._now()
        if zone_name and zone_name not in available_timezones():
            zone_name = _zone_for(zone_name) or zone_name
        if zone_name:
            try:
                zone = ZoneInfo(zone_name)
            except (ZoneInfoNotFoundError, ValueError):
                suggestions = _suggest(zone_name)
                hint = f" Did you mean: {', '.join(suggestions)}?" if suggestions else ""
                return ToolResult.failure(
                    f"Unknown time zone '{zone_name}'. Use an IANA name such as "
                    f"'Europe/Berlin' or 'UTC'.{hint}")
            local = now.astimezone(zone)
            label = zone_name
        else:
            local = now.astimezone()
            label = local.tzname() or "local time"
        offset = local.strftime("%z")
        offset = f"{offset[:3]}:{offset[3:]}" if offset else ""
        text = (f"{local:%A, %Y-%m-%d %H:%M:%S} ({label}, UTC{offset}); "
                f"ISO 8601: {local.isoformat(timespec='seconds')}")
        return ToolResult(text=text)
