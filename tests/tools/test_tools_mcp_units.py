"""MCP pieces that need no server: names, schemas, result conversion; the Toolbox with a server."""

from __future__ import annotations

import re
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from mcp.types import (
    CallToolResult,
    EmbeddedResource,
    ImageContent,
    TextContent,
    TextResourceContents,
    ToolAnnotations,
)

from desktop_app.core.config.settings import McpServerConfig, Settings
from desktop_app.core.tools.mcp_tool import McpTool, convert_result, namespaced, object_schema
from desktop_app.core.tools.toolbox import Toolbox

pytestmark = pytest.mark.anyio
SERVER = Path(__file__).parent / "mcp_servers" / "notes_server.py"


@pytest.mark.parametrize(("server", "tool", "expected"), [
    ("files", "read", "files__read"),
    ("my server", "get.weather/now", "my_server__get_weather_now"),
    ("ünï", "tööl", "n__t_l"),
    ("", "", "x__x"),
])
def test_namespaced_names_use_valid_function_characters(server: str, tool: str, expected: str) -> None:
    assert namespaced(server, tool) == expected


def test_long_names_are_cut_but_stay_unique() -> None:
    a, b = namespaced("s" * 40, "t" * 40 + "a"), namespaced("s" * 40, "t" * 40 + "b")
    assert len(a) <= 64 and len(b) <= 64 and a != b
    assert re.fullmatch(r"[A-Za-z0-9_-]+", a)


def test_object_schema_fills_in_what_function_calling_needs() -> None:
    assert object_schema(None) == {"type": "object", "properties": {}}
    schema = object_schema({"title": "addArguments", "properties": {"a": {"type": "integer"}}})
    assert schema == {"type": "object", "properties": {"a": {"type": "integer"}}}


def _remote(annotations: ToolAnnotations | None) -> SimpleNamespace:
    return SimpleNamespace(name="t", title=None, description="Does\n  things.",
                           input_schema={"type": "object"}, annotations=annotations)


@pytest.mark.parametrize(("annotations", "read_only"), [
    (ToolAnnotations(readOnlyHint=True), True), (ToolAnnotations(readOnlyHint=False), False),
    (ToolAnnotations(destructiveHint=False), False), (None, False)])
def test_read_only_only_when_the_server_says_so(annotations: ToolAnnotations | None,
                                               read_only: bool) -> None:
    tool = McpTool(SimpleNamespace(name="srv"), _remote(annotations))  # type: ignore[arg-type]
    assert tool.read_only is read_only
    assert (tool.name, tool.description) == ("srv__t", "Does things.")


def test_text_result() -> None:
    result = convert_result(CallToolResult(content=[TextContent(type="text", text="a"),
                                                    TextContent(type="text", text="b")]), "t")
    assert (result.text, result.error) == ("a\nb", None)


def test_error_result() -> None:
    result = convert_result(CallToolResult(content=[TextContent(type="text", text="nope")],
                                           is_error=True), "t")
    assert result.error == "The MCP tool 't' reported an error: nope"


def test_html_resource_becomes_an_artifact_and_images_a_note() -> None:
    page = "<html><body>hi</body></html>"
    result = convert_result(CallToolResult(content=[
        EmbeddedResource(type="resource", resource=TextResourceContents(
            uri="file:///reports/summary.html", mime_type="text/html", text=page)),
        ImageContent(type="image", data="aGk=", mime_type="image/png")]), "t")
    [artifact] = result.artifacts
    assert (artifact.name, artifact.mime_type, artifact.content) == ("summary.html", "text/html", page)
    assert "image returned (image/png)" in result.text and page not in result.text


def test_structured_only_result_is_json() -> None:
    result = convert_result(CallToolResult(content=[], structured_content={"x": 1}), "t")
    assert result.text == '{"x": 1}'


async def test_toolbox_joins_builtin_and_mcp_tools_and_honours_disabled() -> None:
    settings = Settings(mcp_servers=[McpServerConfig(name="notes",
                                                     command=[sys.executable, str(SERVER)])])
    settings.tools.disabled = ["notes__crash", "calculator"]
    async with Toolbox(settings) as toolbox:
        assert toolbox.mcp_status == {"notes": None}
        names = toolbox.registry().names()
        assert "notes__add" in names and "convert_units" in names
        assert "notes__crash" not in names and "calculator" not in names
        # A settings change that does not touch MCP keeps the running servers.
        manager = toolbox.mcp
        changed = settings.model_copy(deep=True)
        changed.tools.disabled = []
        await toolbox.apply_settings(changed)
        assert toolbox.mcp is manager and "notes__crash" in toolbox.registry().names()
        # Removing the server stops it and its tools disappear.
        await toolbox.apply_settings(Settings())
        assert toolbox.mcp is not manager and not manager.connections[0].connected
        assert not any(n.startswith("notes__") for n in toolbox.registry().names())
