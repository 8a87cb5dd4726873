"""Connections to MCP servers (stdio, or streamable HTTP on loopback) and their manager.

Built on the official ``mcp`` SDK (2.x ``mcp.Client``). The SDK's client lives inside anyio
task groups that must be entered and left by the same task, so each connection has one
*owner task* that opens the client, publishes it and waits for a stop signal; tool calls from
the agent's tasks go through the published client.

Failure policy — a server can never hang or crash a run:

* every call has a timeout (``call_timeout``), enforced by the SDK and again by
  ``asyncio.wait_for``; a timeout or a lost connection becomes an error observation;
* after a crash or a timeout the connection is torn down (the SDK kills the server's
  process tree) and the *next* call reconnects and re-lists the tools;
* a server that does not start is reported (``status()``) and contributes no tools; the
  rest of the app works without it.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import logging
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Self
from urllib.parse import urlparse

from desktop_app.core import paths
from desktop_app.core.config.settings import McpServerConfig
from desktop_app.core.errors import ConfigError, ToolError
from desktop_app.core.tools.base import Tool, ToolRegistry, ToolResult
from desktop_app.core.tools.mcp_tool import McpTool, convert_result
from desktop_app.core.tools.scrubbed_log import ScrubbedLog

log = logging.getLogger(__name__)


def _is_timeout(exc: BaseException) -> bool:
    return isinstance(exc, TimeoutError) or "timed out" in str(exc).lower()

DEFAULT_CALL_TIMEOUT = 60.0
DEFAULT_CONNECT_TIMEOUT = 30.0


def _check_loopback(url: str) -> None:
    host = urlparse(url).hostname or ""
    try:
        loopback = host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        loopback = False
    if not loopback:
        raise ConfigError(f"The MCP server URL {url} is not on this computer.",
                          hint="Only loopback servers (127.0.0.1, ::1, localhost) are allowed, "
                               "so nothing leaves the machine.")


def _leaf(exc: BaseException) -> BaseException:
    """The first real error inside (nested) exception groups from anyio task groups."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def _describe(exc: BaseException) -> str:
    exc = _leaf(exc)
    if isinstance(exc, asyncio.TimeoutError):
        return "it did not answer in time"
    if isinstance(exc, FileNotFoundError):
        return f"the program was not found ({exc.filename or exc})"
    return str(exc) or type(exc).__name__


class McpConnection:
    """One configured MCP server: connect, list tools, call tools, reconnect after a crash."""

    def __init__(self, config: McpServerConfig, *, call_timeout: float = DEFAULT_CALL_TIMEOUT,
                 connect_timeout: float = DEFAULT_CONNECT_TIMEOUT) -> None:
        if config.transport == "stdio" and not config.command:
            raise ConfigError(f"The MCP server '{config.name}' has no command.",
                              hint="Set 'command' to the program and its arguments.")
        if config.transport == "http":
            if not config.url:
                raise ConfigError(f"The MCP server '{config.name}' has no URL.",
                                  hint="Set 'url', e.g. http://127.0.0.1:8000/mcp.")
            _check_loopback(config.url)
        self.config = config
        self.name = config.name
        self.call_timeout = call_timeout
        self.connect_timeout = connect_timeout
        self.tools: list[McpTool] = []
        self.last_error: str | None = None
        self._client: Any = None
        self._owner: asyncio.Task[None] | None = None
        self._stop: asyncio.Event | None = None
        self._ready: asyncio.Future[Any] | None = None
        self._lock = asyncio.Lock()
        self._errlog: ScrubbedLog | None = None
        self._http_client: Any = None  # an HTTP server's client, closed with the link
        self._log_offset = 0
        self._closing: set[asyncio.Task[None]] = set()

    @property
    def connected(self) -> bool:
        return self._client is not None and self._owner is not None and not self._owner.done()

    @property
    def log_path(self) -> Path:
        """Where the server's stderr goes (its own error messages end up here)."""
        folder = paths.cache_dir() / "mcp"
        folder.mkdir(parents=True, exist_ok=True)
        return folder / f"{''.join(c if c.isalnum() else '_' for c in self.name)}.log"

    def _stderr_tail(self, lines: int = 5) -> str:
        """The server's last stderr lines since the current connection started."""
        try:
            with open(self.log_path, "rb") as handle:
                handle.seek(self._log_offset)
                text = handle.read().decode("utf-8", errors="replace").strip()
        except OSError:
            return ""
        tail = "\n".join(text.splitlines()[-lines:])
        return f" The server's last messages:\n{tail}" if tail else ""

    def _transport(self) -> Any:
        from mcp import StdioServerParameters
        from mcp.client.stdio import stdio_client
        from mcp.client.streamable_http import streamable_http_client

        from desktop_app.core import egress
        from desktop_app.core.sandbox.network import without_network

        if self.config.transport == "http":
            assert self.config.url
            import httpx2

            # Through the egress point: loopback only (checked when configured), and each
            # request is in the privacy ledger, marked local. The SDK's own timeouts.
            self._http_client = egress.async_client(
                f"MCP server {self.config.name}", timeout=httpx2.Timeout(30, read=300))
            return streamable_http_client(self.config.url, http_client=self._http_client)
        argv = list(self.config.command)
        if not self.config.network or egress.is_offline():
            # No network unless the user allowed this server it (and never under the
            # offline lock): its own namespace, nothing reaches or leaves the computer.
            argv = without_network(argv, server=self.config.name)
        command, *args = argv
        params = StdioServerParameters(command=command, args=args,
                                       env=dict(self.config.env) or None)
        if self._errlog is None or self._errlog.closed:
            self._errlog = ScrubbedLog(self.log_path, self._secrets())
        self._errlog.flush()
        self._log_offset = self.log_path.stat().st_size if self.log_path.exists() else 0
        return stdio_client(params, errlog=self._errlog.writer)

    def _secrets(self) -> list[str]:
        """What must never reach the server's log file: its own environment values (tokens
        the user configured for it) and the app's API keys."""
        from desktop_app.core.log_setup import configured_secrets

        return [*self.config.env.values(), *configured_secrets()]

    def _finish_log(self) -> None:
        """Let the log copier write everything the (stopped) server printed."""
        if self._errlog is not None:
            self._errlog.close()

    async def _own(self, ready: asyncio.Future[Any], stop: asyncio.Event) -> None:
        """The owner task: keeps the SDK client open until asked to stop or the link dies."""
        from mcp import Client

        try:
            async with Client(self._transport(), read_timeout_seconds=self.call_timeout,
                              mode="auto") as client:
                ready.set_result(client)
                await stop.wait()
        except BaseException as exc:  # noqa: BLE001 - handed to the opener or logged
            if not ready.done():
                ready.set_exception(exc)
            elif not isinstance(exc, asyncio.CancelledError):
                log.info("MCP server %s closed: %s", self.name, exc)
        finally:
            http_client, self._http_client = self._http_client, None
            if http_client is not None:
                await http_client.aclose()

    async def connect(self) -> list[McpTool]:
        """Start (or restart) the server and list its tools. Raises ``ToolError`` on failure."""
        async with self._lock:
            return await self._connect_locked()

    async def _connect_locked(self) -> list[McpTool]:
        await self._close_locked()
        loop = asyncio.get_running_loop()
        ready: asyncio.Future[Any] = loop.create_future()
        self._ready = ready
        self._stop = asyncio.Event()
        self._owner = loop.create_task(self._own(ready, self._stop), name=f"mcp-{self.name}")
        try:
            client = await asyncio.wait_for(asyncio.shield(ready), self.connect_timeout)
            listing = await asyncio.wait_for(client.list_tools(), self.call_timeout)
        except BaseException as exc:
            await self._close_locked()
            if isinstance(exc, asyncio.CancelledError):
                raise
            self._finish_log()
            self.last_error = (f"The MCP server '{self.name}' could not be started: "
                               f"{_describe(exc)}.{self._stderr_tail()}")
            if self.config.transport == "http":
                hint = f"Check that the server is running and listening at {self.config.url}."
            else:
                hint = (f"Check the server's command in Settings → MCP, and its log at "
                        f"{self.log_path}.")
            raise ToolError(self.last_error, hint=hint) from exc
        self._client = client
        self.last_error = None
        self.tools = [McpTool(self, remote) for remote in listing.tools]
        return self.tools

    async def call(self, tool: str, args: dict[str, Any]) -> ToolResult:
        """Call one tool; every failure is an error result, never an exception or a hang."""
        async with self._lock:
            if not self.connected:
                try:
                    await self._connect_locked()
                except ToolError as exc:
                    return ToolResult.failure(str(exc))
            client = self._client
        try:
            result = await asyncio.wait_for(
                client.call_tool(tool, args, read_timeout_seconds=self.call_timeout),
                self.call_timeout + 2)
        except TimeoutError:
            await self._drop("timed out")
            return self._timeout_result(tool)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - timeouts and crashes told apart below
            if _is_timeout(exc):
                await self._drop("timed out")
                return self._timeout_result(tool)
            crashed = not self._request_only_error(exc)
            if crashed:
                await self._drop(str(exc))
            return ToolResult.failure(
                f"The MCP server '{self.name}' failed while running '{tool}': {_describe(exc)}."
                + (" It will be restarted on the next call." if crashed else "")
                + self._stderr_tail(3))
        return convert_result(result, tool)

    def _timeout_result(self, tool: str) -> ToolResult:
        # A server that let a call run past the limit is likely wedged: restart it rather
        # than let every following call wait out the timeout too.
        return ToolResult.failure(
            f"The MCP server '{self.name}' did not answer '{tool}' within "
            f"{self.call_timeout:g} s; it was stopped and will be restarted on the next call.")

    @staticmethod
    def _request_only_error(exc: BaseException) -> bool:
        """Whether an error was only about this request (bad args...) and the link is fine."""
        from mcp.shared.exceptions import MCPError

        closed = "closed" in str(exc).lower() or "connection" in str(exc).lower()
        return isinstance(exc, MCPError) and not closed

    async def _drop(self, reason: str) -> None:
        """Detach a broken connection and stop it in the background (the caller goes on)."""
        log.info("Dropping MCP connection %s: %s", self.name, reason)
        async with self._lock:
            owner, stop = self._owner, self._stop
            self._client = self._owner = None
            if owner is None:
                return
            task = asyncio.get_running_loop().create_task(self._finish(owner, stop, self._ready))
            self._closing.add(task)
            task.add_done_callback(self._closing.discard)

    async def _close_locked(self) -> None:
        owner, stop = self._owner, self._stop
        self._client = None
        self._owner = None
        if owner is not None:
            await self._finish(owner, stop, self._ready)

    @staticmethod
    async def _finish(owner: asyncio.Task[None], stop: asyncio.Event | None,
                      ready: asyncio.Future[Any] | None) -> None:
        if ready is not None and not ready.done():
            # Still in the handshake (a silent server): nothing to close politely, cancel it;
            # the SDK then kills the process within its bounded shutdown.
            owner.cancel()
        if stop is not None:
            stop.set()
        # The SDK's shutdown closes stdin, then terminates and kills the process tree,
        # each step bounded; this bound is only a last resort.
        done, _ = await asyncio.wait({owner}, timeout=10)
        if not done:
            owner.cancel()
            with contextlib.suppress(BaseException):
                await asyncio.wait_for(owner, 5)

    async def close(self) -> None:
        """Stop the server (its process tree for stdio)."""
        async with self._lock:
            await self._close_locked()
        if self._closing:
            await asyncio.gather(*self._closing, return_exceptions=True)
        self._finish_log()


class McpManager:
    """Starts and stops every configured MCP server with the app; collects their tools."""

    def __init__(self, configs: Iterable[McpServerConfig], *,
                 call_timeout: float = DEFAULT_CALL_TIMEOUT,
                 connect_timeout: float = DEFAULT_CONNECT_TIMEOUT) -> None:
        self.connections: list[McpConnection] = []
        self.errors: dict[str, str] = {}
        seen: set[str] = set()
        for config in configs:
            if not config.enabled:
                continue
            if config.name in seen:
                self.errors[config.name] = f"Two MCP servers are named '{config.name}'."
                continue
            seen.add(config.name)
            try:
                self.connections.append(McpConnection(config, call_timeout=call_timeout,
                                                      connect_timeout=connect_timeout))
            except ConfigError as exc:
                self.errors[config.name] = str(exc)

    @classmethod
    def from_settings(cls, settings: Any, **kwargs: Any) -> McpManager:
        return cls(settings.mcp_servers, **kwargs)

    async def start(self) -> dict[str, str | None]:
        """Connect all servers in parallel. Returns name → error (None when it started)."""
        results = await asyncio.gather(*(c.connect() for c in self.connections),
                                       return_exceptions=True)
        status: dict[str, str | None] = dict(self.errors)
        for connection, result in zip(self.connections, results):
            status[connection.name] = str(result) if isinstance(result, BaseException) else None
        for error in status.values():
            if error:
                log.warning("%s", error)
        return status

    def tools(self) -> list[Tool]:
        """Every tool of every server that started."""
        return [tool for c in self.connections for tool in c.tools]

    def register_into(self, registry: ToolRegistry) -> list[str]:
        """Add the MCP tools to ``registry`` (skipping name clashes); returns added names."""
        added = []
        for tool in self.tools():
            if tool.name not in registry:
                registry.register(tool)
                added.append(tool.name)
        return added

    def status(self) -> list[dict[str, Any]]:
        """One entry per server for the settings page: name, connected, tools, error."""
        rows = [{"name": c.name, "connected": c.connected, "tools": len(c.tools),
                 "error": c.last_error} for c in self.connections]
        rows += [{"name": n, "connected": False, "tools": 0, "error": e}
                 for n, e in self.errors.items()]
        return rows

    async def stop(self) -> None:
        """Stop every server (bounded; used when the app quits)."""
        await asyncio.gather(*(c.close() for c in self.connections), return_exceptions=True)

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()


__all__ = ["McpConnection", "McpManager"]
