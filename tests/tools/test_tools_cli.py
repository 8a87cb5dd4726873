"""``desktop-app tools``: lists built-in and MCP tools with their confirmation needs; calls one."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from tools_helpers import make_workspace

from desktop_app.cli import main
from desktop_app.core.config.settings import McpServerConfig, Settings, save_settings

SERVER = Path(__file__).parent / "mcp_servers" / "notes_server.py"


def test_lists_builtin_and_mcp_tools(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    settings = Settings(mcp_servers=[
        McpServerConfig(name="notes", command=[sys.executable, str(SERVER)]),
        McpServerConfig(name="broken", command=["/nonexistent/server"])])
    settings.tools.workspace = str(make_workspace(tmp_path))
    save_settings(settings)
    assert main(["tools"]) == 0
    out, err = capsys.readouterr()
    lines = {line.split()[0]: line for line in out.splitlines() if line.strip()}
    assert "reads only" in lines["convert_units"] and "asks first" in lines["write_file"]
    assert "reads only" in lines["notes__add"] and "asks first" in lines["notes__remember"]
    assert "MCP server 'notes': running" in out
    assert "MCP server 'broken'" in err and "not found" in err


def test_without_workspace_says_which_tools_are_off(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["tools", "--no-mcp"]) == 0
    out = capsys.readouterr().out
    assert "read_file" not in out and "No workspace folder is set" in out


def test_calls_a_read_only_tool(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["tools", "--no-mcp", "--call", "convert_units",
                 "--args", '{"value": 5, "from_unit": "km", "to_unit": "m"}'])
    assert code == 0 and capsys.readouterr().out.strip() == "5 km = 5000 m"


def test_a_changing_tool_is_denied_without_a_terminal(capsys: pytest.CaptureFixture[str],
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stdin", open("/dev/null"))  # noqa: SIM115 - closed by pytest
    code = main(["tools", "--no-mcp", "--call", "note_create",
                 "--args", '{"title": "x", "text": "y"}'])
    err = capsys.readouterr().err
    assert code == 1 and "stdin is not a terminal" in err and "was not run" in err


def test_bad_arguments_are_reported(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["tools", "--no-mcp", "--call", "convert_units", "--args", "{nope"]) == 2
    assert "--args is not valid JSON" in capsys.readouterr().err
    assert main(["tools", "--no-mcp", "--call", "no_such_tool"]) == 2
    assert "Unknown tool 'no_such_tool'" in capsys.readouterr().err
