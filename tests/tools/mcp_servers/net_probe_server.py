"""A real MCP server (stdio) whose one tool tries to reach a TCP port on 127.0.0.1: the
tests start a listener there on the host and see whether the server reaches it."""

from __future__ import annotations

import socket

from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations

server = MCPServer("net-probe")


@server.tool(description="Try to connect to 127.0.0.1:port.",
             annotations=ToolAnnotations(readOnlyHint=True))
def probe(port: int) -> str:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=3) as connection:
            return "reached: " + connection.recv(64).decode(errors="replace")
    except OSError as exc:
        return f"unreachable: {exc}"


if __name__ == "__main__":
    server.run()
