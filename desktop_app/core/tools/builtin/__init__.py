"""Built-in tools that ship with the app. ``default_tools`` is the set a run starts with."""

from __future__ import annotations

from typing import TYPE_CHECKING

from desktop_app.core.tools.base import Tool
from desktop_app.core.tools.builtin.artifact import HtmlArtifactTool
from desktop_app.core.tools.builtin.assistant import assistant_tools
from desktop_app.core.tools.builtin.calculator import CalculatorTool, calculate
from desktop_app.core.tools.builtin.clock import ClockTool
from desktop_app.core.tools.builtin.dates import DateCalcTool

if TYPE_CHECKING:
    from desktop_app.core.config.settings import Settings
    from desktop_app.core.tools.builtin.notes import NoteStore


def default_tools(settings: Settings | None = None, *,
                  notes: NoteStore | None = None) -> list[Tool]:
    """The built-in tools, minus those the user disabled in settings.

    More tools are appended here as they are written; each one decides from ``settings``
    whether it is available (e.g. a workspace folder must be configured). ``notes``: where
    the note tools keep notes (default: the user's notes folder; the evaluation uses a
    scratch folder).
    """
    tools: list[Tool] = [CalculatorTool(), ClockTool(), DateCalcTool(), HtmlArtifactTool(),
                         *assistant_tools(settings, notes=notes)]
    disabled = set(settings.tools.disabled) if settings is not None else set()
    return [tool for tool in tools if tool.name not in disabled]


__all__ = ["CalculatorTool", "ClockTool", "DateCalcTool", "HtmlArtifactTool", "calculate", "default_tools"]
