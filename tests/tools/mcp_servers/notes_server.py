"""A small real MCP server (stdio) for the tests: a few tools with and without readOnlyHint.

Run: ``python notes_server.py [--many N]``. ``crash`` kills the process mid-call and ``hang``
never answers, so the client's crash and timeout handling can be tested against a real peer.
"""

from __future__ import annotations

import os
import sys
import time

from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations

server = MCPServer("test-notes")
_NOTES: dict[str, str] = {}


@server.tool(description="Add two integers.", annotations=ToolAnnotations(readOnlyHint=True))
def add(a: int, b: int) -> str:
    return str(a + b)


@server.tool(description="Store a note under a key (changes server state).")
def remember(key: str, text: str) -> str:
    _NOTES[key] = text
    return f"remembered {key}"


@server.tool(description="Return the process id of the server.",
             annotations=ToolAnnotations(readOnlyHint=True))
def pid() -> str:
    return str(os.getpid())


@server.tool(description="Exit the server process in the middle of a call.",
             annotations=ToolAnnotations(readOnlyHint=True))
def crash() -> str:
    sys.stdout.flush()
    os._exit(3)


@server.tool(description="Never answer (sleeps for a long time).",
             annotations=ToolAnnotations(readOnlyHint=True))
def hang(seconds: float = 3600) -> str:
    time.sleep(seconds)
    return "woke up"


@server.tool(description="Fail with an error.", annotations=ToolAnnotations(readOnlyHint=True))
def fail(message: str = "boom") -> str:
    raise ValueError(message)


def _echo(variant: int):
    def echo(text: str) -> str:
        return f"echo{variant}: {text}"
    return echo


def _add_many(count: int) -> None:
    for i in range(count):
        server.add_tool(_echo(i), name=f"echo_{i}", description=f"Echo text back (variant {i}).",
                        annotations=ToolAnnotations(readOnlyHint=True))


if __name__ == "__main__":
    if "--many" in sys.argv:
        _add_many(int(sys.argv[sys.argv.index("--many") + 1]))
    if "--http" in sys.argv:
        port = int(sys.argv[sys.argv.index("--http") + 1])
        server.run("streamable-http", host="127.0.0.1", port=port)
    else:
        server.run()
