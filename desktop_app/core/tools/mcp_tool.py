"""An MCP server's tool as a project ``Tool``: naming, schema, read-only flag, results.

Names are ``<server>__<tool>`` reduced to the characters function-calling APIs accept
(``[A-Za-z0-9_-]``, at most 64), so two servers can both offer ``search``. A tool is
``read_only`` only when the server marks it so (``annotations.readOnlyHint``); every other
MCP tool asks the user first. The connection that actually calls the server is
``McpConnection`` in ``mcp_client.py``.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any, Protocol

from desktop_app.core.tools.base import RICH_MIME_TYPES, Artifact, Tool, ToolResult


class ToolCaller(Protocol):
    """What a tool needs of its server connection (``mcp_client.McpConnection``); a
    protocol, so this module does not import the client that imports it."""

    @property
    def name(self) -> str: ...

    async def call(self, tool: str, args: dict[str, Any]) -> ToolResult: ...

MAX_NAME = 64
MAX_DESCRIPTION = 1_000
SEPARATOR = "__"


def _clean(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_-]+", "_", text).strip("_") or "x"


def namespaced(server: str, tool: str) -> str:
    """``server__tool`` with only valid function-name characters, at most 64 of them."""
    name = f"{_clean(server)}{SEPARATOR}{_clean(tool)}"
    if len(name) <= MAX_NAME:
        return name
    # Keep it unique and recognisable: a prefix plus a short hash of the full name.
    digest = hashlib.sha1(name.encode()).hexdigest()[:8]
    return f"{name[: MAX_NAME - 9]}_{digest}"


def object_schema(schema: dict[str, Any] | None) -> dict[str, Any]:
    """The server's input schema, made a valid object schema for function calling."""
    schema = dict(schema or {})
    schema.setdefault("type", "object")
    schema.setdefault("properties", {})
    schema.pop("title", None)  # "addArguments" helps no model
    return schema


def convert_result(result: Any, tool_name: str) -> ToolResult:
    """An MCP ``CallToolResult`` as a ``ToolResult``; HTML/Markdown resources become artifacts."""
    texts: list[str] = []
    artifacts: list[Artifact] = []
    for block in getattr(result, "content", None) or []:
        kind = getattr(block, "type", "")
        if kind == "text":
            texts.append(block.text)
        elif kind == "resource":
            resource = block.resource
            mime = getattr(resource, "mime_type", None) or ""
            text = getattr(resource, "text", None)
            uri = str(getattr(resource, "uri", ""))
            if text is not None and mime in RICH_MIME_TYPES:
                name = uri.rstrip("/").rsplit("/", 1)[-1] or f"{tool_name}.html"
                artifacts.append(Artifact(name=name, mime_type=mime, content=text))
            elif text is not None:
                texts.append(text)
            else:
                texts.append(f"[binary resource {uri} ({mime or 'unknown type'})]")
        elif kind == "resource_link":
            texts.append(f"[resource: {block.uri}]")
        elif kind in ("image", "audio"):
            texts.append(f"[{kind} returned ({block.mime_type}); it cannot be shown as text]")
    structured = getattr(result, "structured_content", None)
    if not texts and structured is not None:
        texts.append(json.dumps(structured, ensure_ascii=False))
    text = "\n".join(texts)
    if getattr(result, "is_error", False):
        return ToolResult(error=f"The MCP tool '{tool_name}' reported an error: "
                                f"{text or '(no details)'}", artifacts=artifacts)
    return ToolResult(text=text or "(the tool returned nothing)", artifacts=artifacts)


class McpTool(Tool):
    """A tool served by an MCP server, called through its ``McpConnection``."""

    #: An MCP server is a program on this computer with the user's files at hand: what it
    #: returns may be their content (a model elsewhere gets it only with consent).
    reads_private = True

    def __init__(self, connection: ToolCaller, remote: Any) -> None:
        self.connection = connection
        self.remote_name: str = remote.name
        self.name = namespaced(connection.name, remote.name)
        description = " ".join((remote.description or remote.title or remote.name).split())
        # The server is already in the name; the description stays the server's own words.
        self.description = description[:MAX_DESCRIPTION]
        self.parameters = object_schema(getattr(remote, "input_schema", None))
        annotations = getattr(remote, "annotations", None)
        self.read_only = bool(annotations is not None and annotations.read_only_hint is True)

    async def run(self, args: dict[str, Any]) -> ToolResult:
        return await self.connection.call(self.remote_name, args)
