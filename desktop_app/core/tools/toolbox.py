"""The app's tools in one place: built-ins chosen by settings plus the MCP servers' tools.

MCP servers are long-lived (started with the app, stopped when it quits), while each run
gets a fresh ``ToolRegistry``. ``Toolbox`` holds the one ``McpManager`` and builds those
registries::

    toolbox = Toolbox(settings)
    await toolbox.start()                  # app start: MCP servers come up
    agent = ReActAgent(llm, toolbox.registry(), confirm=...)
    await toolbox.apply_settings(new)      # settings page saved: servers restarted if changed
    await toolbox.aclose()                 # app quit

``settings.tools.disabled`` applies to MCP tools too (by their namespaced name).
"""

from __future__ import annotations

from typing import Any, Self

from desktop_app.core.config.settings import Settings
from desktop_app.core.tools.base import ToolRegistry
from desktop_app.core.tools.builtin import default_tools
from desktop_app.core.tools.mcp_client import McpManager


class Toolbox:
    """Built-in tools plus MCP tools; owns the MCP servers' lifetime."""

    def __init__(self, settings: Settings, **mcp_options: Any) -> None:
        self.settings = settings
        self._mcp_options = mcp_options
        self.mcp = McpManager(settings.mcp_servers, **mcp_options)
        self.mcp_status: dict[str, str | None] = {}

    async def start(self) -> dict[str, str | None]:
        """Start every enabled MCP server; returns server name → error (None = running)."""
        self.mcp_status = await self.mcp.start()
        return self.mcp_status

    def registry(self, settings: Settings | None = None) -> ToolRegistry:
        """A fresh registry for one run: built-ins first, then MCP tools (name clashes skip)."""
        settings = settings or self.settings
        registry = ToolRegistry(default_tools(settings))
        disabled = set(settings.tools.disabled)
        for tool in self.mcp.tools():
            if tool.name not in disabled and tool.name not in registry:
                registry.register(tool)
        return registry

    async def apply_settings(self, settings: Settings) -> dict[str, str | None]:
        """Adopt new settings; restart the MCP servers only if their configuration changed."""
        changed = ([s.model_dump() for s in settings.mcp_servers]
                   != [s.model_dump() for s in self.settings.mcp_servers])
        self.settings = settings
        if changed:
            await self.mcp.stop()
            self.mcp = McpManager(settings.mcp_servers, **self._mcp_options)
            self.mcp_status = await self.mcp.start()
        return self.mcp_status

    async def aclose(self) -> None:
        """Stop every MCP server."""
        await self.mcp.stop()

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
