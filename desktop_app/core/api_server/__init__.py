"""The local OpenAI-compatible API server (issue 28), behind one entry: ``ApiServer``.

Other programs on this computer (an editor, a notebook, a script, another chat client)
use the models the app runs, through the OpenAI API they already speak: ``/v1/models``,
``/v1/chat/completions`` (streaming, tools, JSON output), ``/v1/embeddings``, and the model
``desktop-app-agent`` that runs the app's own agent. Built on Starlette and uvicorn (the
stack llama-cpp-python's own server uses), over the app's model registry, so the window
and the server share one loaded copy of each model and one queue per model.

Bound to 127.0.0.1 unless told otherwise; an API key is required unless the caller opts
out on loopback; every request served is a row in the privacy ledger (marked local when
the client is on this computer).
"""

from __future__ import annotations

import asyncio
import socket
from dataclasses import dataclass, field
from typing import Any

from desktop_app.core import egress
from desktop_app.core.api_server.middleware import Guard
from desktop_app.core.api_server.pool import AGENT_MODEL, Loader, ModelPool
from desktop_app.core.api_server.routes import ToolsFactory, build_app
from desktop_app.core.errors import ConfigError
from desktop_app.core.llm.registry import ModelRegistry

DEFAULT_PORT = 8765
MAX_CONNECTIONS = 128


@dataclass
class ServerOptions:
    host: str = "127.0.0.1"
    port: int = DEFAULT_PORT
    #: None: no key is asked for (only allowed on loopback).
    api_key: str | None = None
    #: Model names to serve (None: every local model).
    models: list[str] | None = None
    #: Hosted endpoints the user chose to serve too.
    hosted: list[str] = field(default_factory=list)
    max_waiting: int = 32


class ApiServer:
    """One running server on the current event loop (the CLI's or the window's)."""

    def __init__(self, registry: ModelRegistry, options: ServerOptions, *,
                 loader: Loader | None = None, tools: ToolsFactory | None = None) -> None:
        if options.api_key is None and not egress.is_local_host(options.host):
            raise ConfigError(f"The server would answer anyone who can reach {options.host} "
                              "without a key.",
                              hint="Bind to 127.0.0.1, or keep the API key.")
        self.options = options
        self.pool = ModelPool(registry, names=options.models, hosted=options.hosted,
                              loader=loader, max_waiting=options.max_waiting,
                              agent=tools is not None)
        self.app = Guard(build_app(self.pool, tools=tools), api_key=options.api_key,
                         loopback_only=egress.is_local_host(options.host))
        self._server: Any = None
        self._listener: socket.socket | None = None
        self._task: asyncio.Task[None] | None = None

    @property
    def port(self) -> int:
        """The port listened on (the one the OS chose when asked for port 0)."""
        if self._listener is not None:
            return int(self._listener.getsockname()[1])
        return self.options.port

    @property
    def base_url(self) -> str:
        host = self.options.host
        shown = "127.0.0.1" if host in ("0.0.0.0", "::") else host
        shown = f"[{shown}]" if ":" in shown else shown
        return f"http://{shown}:{self.port}/v1"

    async def start(self) -> None:
        """Listen; raises ``ConfigError`` when the address cannot be used (a port taken)."""
        import uvicorn

        class _QuietServer(uvicorn.Server):
            def capture_signals(self) -> Any:  # the app (or the CLI) owns the signals
                import contextlib

                return contextlib.nullcontext()

        # The socket is bound here so that a port in use is a clear error (uvicorn would
        # call sys.exit inside the event loop).
        try:
            listener = _bind(self.options.host, self.options.port)
        except OSError as exc:
            raise ConfigError(
                f"The API server cannot listen on {self.options.host}:{self.options.port}: "
                f"{exc.strerror or exc}.",
                hint="Choose another port with --port, or stop the program using it.") from None
        # proxy_headers off: a local process must not set the client address the ledger
        # shows (X-Forwarded-For). limit_concurrency: half-sent requests (slowloris) get
        # 503 beyond it instead of exhausting the process's files.
        config = uvicorn.Config(self.app, log_level="warning", access_log=False,
                                lifespan="off", timeout_graceful_shutdown=3,
                                reset_contextvars=True, proxy_headers=False,
                                limit_concurrency=MAX_CONNECTIONS, timeout_keep_alive=5)
        import logging

        # A flood of broken connections must not fill the terminal with tracebacks; what
        # a client did wrong is in its answer.
        logging.getLogger("uvicorn.error").setLevel(logging.CRITICAL)
        self._server = _QuietServer(config)
        self._listener = listener
        self._task = asyncio.ensure_future(self._server.serve(sockets=[listener]))
        while not self._server.started:
            if self._task.done():
                self._task.result()
                raise ConfigError("The API server stopped while starting.")
            await asyncio.sleep(0.02)

    async def stop(self) -> None:
        if self._server is None or self._task is None:
            return
        self._server.should_exit = True
        try:
            await asyncio.wait_for(asyncio.shield(self._task), 10)
        except TimeoutError:
            self._server.force_exit = True
            await self._task
        self._server = self._task = None
        if self._listener is not None:
            self._listener.close()
            self._listener = None

    async def wait(self) -> None:
        """Until the server stops."""
        if self._task is not None:
            await self._task

    @property
    def serving(self) -> int:
        return self.pool.in_flight


def _bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    listener = socket.socket(family, socket.SOCK_STREAM)
    try:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind((host, port))
        listener.listen(128)
    except OSError:
        listener.close()
        raise
    listener.setblocking(False)
    return listener


__all__ = ["AGENT_MODEL", "DEFAULT_PORT", "ApiServer", "ServerOptions"]
