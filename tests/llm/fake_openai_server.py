"""A tiny scripted OpenAI-style HTTP server (stdlib only) for error and parsing tests.

The real SDK talks real HTTP to it, so the adapter is tested through the same code path as
against a real provider; the test scripts exactly which status, JSON body or SSE chunks come
back. Requests are recorded (method, path, headers, JSON body) for assertions.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from desktop_app.core.llm.openai_adapter import OpenAICompatibleLLM


@dataclass
class Reply:
    """One scripted response: a JSON/text body, or SSE events (``[DONE]`` is appended)."""

    status: int = 200
    body: Any = None
    sse: list[Any] | None = None
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    done: bool = True
    #: Pause between SSE events, like a model producing tokens.
    event_delay: float = 0.0


@dataclass
class Recorded:
    method: str
    path: str
    headers: dict[str, str]
    json: Any


def error_reply(status: int, message: str, *, code: str | None = None,
                type_: str = "invalid_request_error", param: str | None = None) -> Reply:
    """An error body shaped like OpenAI's: ``{"error": {"message", "type", "param", "code"}}``."""
    return Reply(status=status, body={"error": {"message": message, "type": type_,
                                                "param": param, "code": code}})


def completion(content: str | None = "", *, tool_calls: list[dict[str, Any]] | None = None,
               usage: tuple[int, int] | None = (5, 3), finish_reason: str = "stop",
               **message_extra: Any) -> dict[str, Any]:
    """A non-streaming chat.completion body."""
    message: dict[str, Any] = {"role": "assistant", "content": content, **message_extra}
    if tool_calls is not None:
        message["tool_calls"] = tool_calls
    body: dict[str, Any] = {"id": "chatcmpl-1", "object": "chat.completion", "created": 1,
                            "model": "fake-model", "choices": [
                                {"index": 0, "message": message, "finish_reason": finish_reason}]}
    if usage is not None:
        body["usage"] = {"prompt_tokens": usage[0], "completion_tokens": usage[1],
                         "total_tokens": usage[0] + usage[1]}
    return body


def chunk(content: str | None = None, *, finish_reason: str | None = None,
          tool_calls: list[dict[str, Any]] | None = None, usage: tuple[int, int] | None = None,
          no_choices: bool = False, **delta_extra: Any) -> dict[str, Any]:
    """One chat.completion.chunk."""
    delta: dict[str, Any] = dict(delta_extra)
    if content is not None:
        delta["content"] = content
    if tool_calls is not None:
        delta["tool_calls"] = tool_calls
    body: dict[str, Any] = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1,
                            "model": "fake-model", "choices": [] if no_choices else [
                                {"index": 0, "delta": delta, "finish_reason": finish_reason}]}
    if usage is not None:
        body["usage"] = {"prompt_tokens": usage[0], "completion_tokens": usage[1],
                         "total_tokens": usage[0] + usage[1]}
    return body


class FakeOpenAIServer:
    """Serves scripted replies in order on 127.0.0.1; 500 when the script runs dry."""

    def __init__(self, host: str = "127.0.0.1") -> None:
        self.host = host
        self.replies: deque[Reply] = deque()
        self.requests: list[Recorded] = []
        #: Per request: the bytes of the body received and of the body sent back.
        self.bytes_in: list[int] = []
        self.bytes_out: list[int] = []
        #: Set when a client hung up while a reply was being written (e.g. a closed stream).
        self.client_hung_up = threading.Event()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # keep test output clean
                pass

            def do_GET(self) -> None:
                server._handle(self, None)

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length) if length else b""
                server.bytes_in.append(len(raw))
                server._handle(self, json.loads(raw) if raw else None)

        self._httpd = ThreadingHTTPServer((host, 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever,
                                        kwargs={"poll_interval": 0.02}, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self._httpd.server_address[1]}/v1"

    def add(self, *replies: Reply | dict[str, Any]) -> None:
        """Queue replies; a dict is a 200 JSON body."""
        for reply in replies:
            self.replies.append(reply if isinstance(reply, Reply) else Reply(body=reply))

    def start(self) -> FakeOpenAIServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def _handle(self, handler: BaseHTTPRequestHandler, payload: Any) -> None:
        self.requests.append(Recorded(handler.command, handler.path,
                                      {k.lower(): v for k, v in handler.headers.items()}, payload))
        reply = self.replies.popleft() if self.replies else Reply(
            status=500, body={"error": {"message": "no scripted reply left", "type": "test"}})
        if reply.delay:
            time.sleep(reply.delay)
        try:
            if reply.sse is not None:
                self.bytes_out.append(self._send_sse(handler, reply))
            else:
                self.bytes_out.append(self._send_body(handler, reply))
        except (BrokenPipeError, ConnectionResetError):
            self.client_hung_up.set()  # timeouts, cancelled streams: nothing left to send

    @staticmethod
    def _send_body(handler: BaseHTTPRequestHandler, reply: Reply) -> int:
        if isinstance(reply.body, (dict, list)):
            data, ctype = json.dumps(reply.body).encode(), "application/json"
        else:
            data, ctype = str(reply.body or "").encode(), "text/html; charset=utf-8"
        handler.send_response(reply.status)
        handler.send_header("content-type", reply.headers.get("content-type", ctype))
        handler.send_header("content-length", str(len(data)))
        for key, value in reply.headers.items():
            if key.lower() != "content-type":
                handler.send_header(key, value)
        handler.end_headers()
        handler.wfile.write(data)
        return len(data)

    @staticmethod
    def _send_sse(handler: BaseHTTPRequestHandler, reply: Reply) -> int:
        handler.send_response(reply.status)
        handler.send_header("content-type", "text/event-stream")
        handler.send_header("connection", "close")
        handler.end_headers()
        events = [e if isinstance(e, str) else json.dumps(e) for e in reply.sse or []]
        if reply.done:
            events.append("[DONE]")
        sent = 0
        for event in events:
            data = f"data: {event}\n\n".encode()
            handler.wfile.write(data)
            handler.wfile.flush()
            sent += len(data)
            if reply.event_delay:
                time.sleep(reply.event_delay)
        handler.close_connection = True
        return sent


@pytest.fixture
def fake_server() -> Iterator[FakeOpenAIServer]:
    """A started scripted server, stopped after the test (import this fixture to use it)."""
    server = FakeOpenAIServer().start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(name="llm")
async def scripted_llm(fake_server: FakeOpenAIServer) -> AsyncIterator[OpenAICompatibleLLM]:
    """The adapter pointed at the scripted server, without a key; its HTTP client is closed
    afterwards (import this fixture and ``fake_server`` to use it as ``llm``)."""
    adapter = OpenAICompatibleLLM(base_url=fake_server.base_url, model="fake-model",
                                  max_retries=0, timeout=10)
    yield adapter
    await adapter.aclose()


def this_computers_lan_address() -> str | None:
    """An address of this computer that is not loopback (a server there counts as another
    computer for the app: its host is not localhost), or None without a network."""
    import socket

    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        probe.connect(("192.0.2.1", 9))  # no packet is sent: only the route is looked up
        address = probe.getsockname()[0]
    except OSError:
        return None
    finally:
        probe.close()
    return None if address.startswith("127.") or address == "0.0.0.0" else address


@pytest.fixture
def lan_server() -> Iterator[FakeOpenAIServer]:
    """The scripted server on this computer's LAN address: to the app, a hosted model."""
    address = this_computers_lan_address()
    if address is None:
        pytest.skip("this machine has no non-loopback address")
    server = FakeOpenAIServer(address).start()
    try:
        yield server
    finally:
        server.stop()


def use_endpoint(app_home: Path, base_url: str, *, name: str = "scripted",
                 model: str = "fake-model", endpoint: dict[str, Any] | None = None,
                 **settings: Any) -> None:
    """Write the app's settings so that its default model is the server at ``base_url``
    (``endpoint``: more fields of that endpoint; ``settings``: more top-level settings)."""
    config = app_home / "config"
    config.mkdir(parents=True, exist_ok=True)
    (config / "settings.json").write_text(json.dumps({
        "schema_version": 1, "default_model": name,
        "endpoints": [{"name": name, "base_url": base_url, "model": model, **(endpoint or {})}],
        **settings}))
