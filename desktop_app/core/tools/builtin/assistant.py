"""The personal-assistant tools beyond the basics, chosen from settings.

Always: unit conversion, notes, report/table/chart artifacts. With a workspace folder set
(``settings.tools.workspace``): file tools and the document reader. With a workspace *and*
``settings.tools.code_tool_enabled``: the Python code tool (off by default). A workspace
folder that no longer exists does not stop the app; its tools are left out and logged.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from desktop_app.core.errors import ToolError
from desktop_app.core.tools.base import Tool
from desktop_app.core.tools.builtin.code import PythonCodeTool
from desktop_app.core.tools.builtin.documents import ReadDocumentTool
from desktop_app.core.tools.builtin.files import (
    ListFilesTool,
    ReadFileTool,
    SearchFilesTool,
    WriteFileTool,
    file_tools,
)
from desktop_app.core.tools.builtin.notes import NoteStore, note_tools
from desktop_app.core.tools.builtin.reports import report_tools
from desktop_app.core.tools.builtin.units import UnitConvertTool
from desktop_app.core.tools.sandbox import Workspace

if TYPE_CHECKING:
    from desktop_app.core.config.settings import Settings

log = logging.getLogger(__name__)


def workspace_from_settings(settings: Settings | None) -> Workspace | None:
    """The configured workspace, or None when unset or missing (logged)."""
    folder = settings.tools.workspace if settings is not None else None
    if not folder:
        return None
    try:
        return Workspace(folder)
    except ToolError as exc:
        log.warning("Workspace tools are off: %s", exc)
        return None


def assistant_tools(settings: Settings | None = None, *,
                    notes: NoteStore | None = None) -> list[Tool]:
    """Units, notes, artifacts; file/document tools with a workspace; code tool if enabled."""
    tools: list[Tool] = [UnitConvertTool(), *note_tools(notes), *report_tools()]
    workspace = workspace_from_settings(settings)
    if workspace is not None:
        tools += [*file_tools(workspace), ReadDocumentTool(workspace)]
        if settings is not None and settings.tools.code_tool_enabled:
            from desktop_app.core.sandbox import sandbox_status

            status = sandbox_status()
            if status.available:
                tools.append(PythonCodeTool(workspace))
            else:  # no OS sandbox, no code tool (Settings shows the same reason)
                log.warning("The Python code tool stays off: %s", status.reason)
    elif settings is not None and settings.tools.code_tool_enabled:
        log.warning("The Python code tool is enabled but no workspace folder is set; "
                    "it stays off until a workspace is chosen.")
    return tools


#: Tools that exist only with a workspace folder (and, for the code tool, the setting on).
WORKSPACE_TOOL_CLASSES: tuple[type[Tool], ...] = (
    ListFilesTool, ReadFileTool, WriteFileTool, SearchFilesTool, ReadDocumentTool,
    PythonCodeTool)


def workspace_tool_info() -> list[tuple[str, str, bool]]:
    """(name, description, read_only) of the workspace tools, without needing a workspace.

    For settings pages that let the user disable tools which are not active yet.
    """
    return [(cls.name, cls.description, cls.read_only) for cls in WORKSPACE_TOOL_CLASSES]
