"""What every request to the API server passes first: the body limit, the API key, and the
privacy ledger (each request served is a row: the client's address, what it asked, how
many bytes went each way)."""

from __future__ import annotations

import hmac
import json
from typing import Any

from desktop_app.core.api_server.protocol import ApiError

Scope = dict[str, Any]
Message = dict[str, Any]
Receive = Any
Send = Any
ASGIApp = Any

#: Bytes a request body may have (a long conversation fits many times over).
MAX_BODY = 8 * 1024 * 1024


async def send_error(send: Send, error: ApiError) -> None:
    body = json.dumps(error.body()).encode()
    headers = [(b"content-type", b"application/json"),
               (b"content-length", str(len(body)).encode())]
    headers += [(k.lower().encode(), v.encode()) for k, v in error.headers.items()]
    await send({"type": "http.response.start", "status": error.status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


class Guard:
    """Body limit, API key and ledger around the routes (plain ASGI: streaming stays
    streaming, and the counts are of the bytes really sent)."""

    def __init__(self, app: ASGIApp, *, api_key: str | None, max_body: int = MAX_BODY,
                 loopback_only: bool = True) -> None:
        self.app = app
        self.api_key = api_key
        self.max_body = max_body
        #: Bound to this computer: only requests addressed to it by a loopback name are
        #: answered (a web page that rebinds its own name to 127.0.0.1 is refused).
        self.loopback_only = loopback_only

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1")
                   for k, v in scope.get("headers", [])}
        trip = _Trip(scope)
        counted_send = trip.counting(send)
        try:
            error = self._foreign(headers) or self._refusal(scope, headers)
            if error is not None:
                trip.refused = True  # nothing was served: no ledger row to grow
                await send_error(counted_send, error)
                return
            body = await self._read_body(receive)
            if body is None:
                trip.refused = True
                await send_error(counted_send, ApiError(
                    413, f"The request body is larger than {self.max_body:,} bytes.",
                    code="request_too_large"))
                return
            trip.body = body
            await self.app(scope, _replay(body, receive), counted_send)
        finally:
            trip.record()

    def _foreign(self, headers: dict[str, str]) -> ApiError | None:
        """403 for a request from a web page (browsers send Origin; API clients do not) or,
        on loopback, addressed to a name that is not this computer's (DNS rebinding)."""
        origin = headers.get("origin")
        if origin is not None:
            return ApiError(403, "Requests from web pages are refused: this server is for "
                            "programs on this computer.", kind="permission_error",
                            code="browser_origin_refused")
        if self.loopback_only:
            from urllib.parse import urlsplit

            from desktop_app.core import egress

            host = urlsplit(f"//{headers.get('host', '')}").hostname or ""
            if not egress.is_local_host(host):
                return ApiError(403, f"This server answers requests addressed to this computer "
                                f"(localhost, 127.0.0.1), not to '{host[:60]}'.",
                                kind="permission_error", code="foreign_host_refused")
        return None

    def _refusal(self, scope: Scope, headers: dict[str, str]) -> ApiError | None:
        length = headers.get("content-length")
        if length is not None and (not length.isdigit() or int(length) > self.max_body):
            return ApiError(413, f"The request body is larger than {self.max_body:,} bytes.",
                            code="request_too_large")
        if self.api_key is None or scope.get("path") == "/health":
            return None
        given = headers.get("authorization", "")
        token = given[7:].strip() if given.lower().startswith("bearer ") else ""
        if not token:
            return ApiError(401, "This server needs an API key: send it as "
                            "'Authorization: Bearer KEY' (desktop-app serve shows it).",
                            kind="authentication_error", code="missing_api_key")
        if not hmac.compare_digest(token.encode(), self.api_key.encode()):
            return ApiError(401, "The API key is not this server's.",
                            kind="authentication_error", code="invalid_api_key")
        return None

    async def _read_body(self, receive: Receive) -> bytes | None:
        parts: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                break
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_body:
                return None
            parts.append(chunk)
            if not message.get("more_body"):
                break
        return b"".join(parts)


def _replay(body: bytes, receive: Receive) -> Receive:
    """The body (already read) once, then the client's own messages: after the body the
    server's ``receive`` waits for the disconnect, which is how a streaming answer learns
    that the client has gone (and stops generating)."""
    sent = False

    async def replayed() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        message: Message = await receive()
        return message

    return replayed


class _Trip:
    """One request to the server, as one ledger row."""

    def __init__(self, scope: Scope) -> None:
        client = scope.get("client") or ("unknown", 0)
        self.client = str(client[0])
        self.path = str(scope.get("path", ""))[:200]
        self.method = str(scope.get("method", ""))
        self.body = b""
        self.sent = 0
        self.status: int | None = None
        self.refused = False

    def counting(self, send: Send) -> Send:
        async def counted(message: Message) -> None:
            if message["type"] == "http.response.start":
                self.status = int(message["status"])
            elif message["type"] == "http.response.body":
                self.sent += len(message.get("body", b""))
            await send(message)

        return counted

    def record(self) -> None:
        from desktop_app.core import egress
        from desktop_app.core.egress import EgressRecord

        if self.refused:
            return  # refused before anything was served (no key, too large, a web page)
        egress.ledger().record(EgressRecord(
            host=self.client, url=self.path, method=self.method,
            purpose=f"served: {self.method} {self.path}", bytes_sent=self.sent,
            bytes_received=len(self.body),
            content=self.body.decode("utf-8", errors="replace") or f"{self.method} {self.path}",
            local=egress.is_local_host(self.client), status=self.status))
