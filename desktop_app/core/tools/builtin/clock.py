"""The current date and time, in any IANA time zone (``zoneinfo``)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError, available_timezones

from desktop_app.core.tools.base import Tool, ToolResult


def _suggest(name: str, limit: int = 3) -> list[str]:
    """Zone names that contain the last part of ``name`` (e.g. 'berlin' → 'Europe/Berlin')."""
    needle = name.replace(" ", "_").split("/")[-1].lower()
    if not needle:
        return []
    return sorted(z for z in available_timezones() if needle in z.lower())[:limit]


class ClockTool(Tool):
    """Reports the current date, time, weekday and UTC offset."""

    name = "current_time"
    description = "Current date and time, optionally in an IANA zone (Europe/Berlin)"
    parameters: dict[str, Any] = {
        "type": "object",
        "properties": {
            "timezone": {"type": "string",
                         "description": "IANA zone name, e.g. 'America/New_York'; default: local"},
        },
        "additionalProperties": False,
    }
    read_only = True

    def __init__(self, now: Callable[[], datetime] | None = None) -> None:
        # Injectable clock so tests are deterministic; the default is the real time.
        self._now = now or (lambda: datetime.now(UTC))

    async def run(self, args: dict[str, Any]) -> ToolResult:
        zone_name = (args.get("timezone") or "").strip()
        now = self._now()
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
