"""HTTP clients whose every request passes the offline lock and lands in the ledger.

A transport wraps httpx's own: before the request is handed on, the lock decides (no DNS
lookup or connection happens for a refused one); the response's body is counted as it is
read, and when it is closed (or the request fails) one ledger row is written with what was
sent. Streaming answers are counted to their last byte, whenever the reader stops.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from typing import Any

import httpx2

from desktop_app.core.egress import lock
from desktop_app.core.egress.context import Serving, current_purpose, current_serving
from desktop_app.core.egress.ledger import EgressRecord, ledger

_KEY_REMOVED = "[key removed]"


class _Trip:
    """One request on its way: recorded once, when its response is closed or it failed."""

    def __init__(self, request: httpx2.Request, body: bytes, purpose: str,
                 secrets: Sequence[str]) -> None:
        self.url = str(request.url)
        self.host = request.url.host or ""
        self.method = request.method
        self.body = body
        self.purpose = purpose
        self.secrets = [s for s in secrets if s]
        self.serving: Serving = current_serving()  # the caller's, not the reader's
        self.received = 0
        self.recorded = False
        self.token = ""

    def content(self) -> str:
        text = self.body.decode("utf-8", errors="replace") if self.body else (
            f"{self.method} {self.url}")
        for secret in self.secrets:
            text = text.replace(secret, _KEY_REMOVED)
        return text

    def begin(self) -> None:
        """Checks the ledger can be written (else nothing is sent) and records the request
        as it leaves: it is in the ledger even if its answer never ends."""
        book = ledger()
        book.check()
        url = self.url
        for secret in self.secrets:
            url = url.replace(secret, _KEY_REMOVED)
        self.token = book.begin(EgressRecord(
            host=self.host, url=url, method=self.method, purpose=self.purpose,
            bytes_sent=len(self.body), bytes_received=0, content=self.content(),
            local=lock.is_local_host(self.host), conversation_id=self.serving.conversation_id,
            message_id=self.serving.message_id))

    def finish(self, status: int | None, error: str | None = None) -> None:
        if self.recorded:
            return
        self.recorded = True
        ledger().finish(self.token, bytes_received=self.received, status=status, error=error)


class _CountedAsyncStream(httpx2.AsyncByteStream):
    def __init__(self, inner: Any, trip: _Trip, status: int) -> None:
        self._inner, self._trip, self._status = inner, trip, status

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for chunk in self._inner:
            self._trip.received += len(chunk)
            yield chunk

    async def aclose(self) -> None:
        try:
            await self._inner.aclose()
        finally:
            self._trip.finish(self._status)


class _CountedStream(httpx2.SyncByteStream):
    def __init__(self, inner: Any, trip: _Trip, status: int) -> None:
        self._inner, self._trip, self._status = inner, trip, status

    def __iter__(self) -> Iterator[bytes]:
        for chunk in self._inner:
            self._trip.received += len(chunk)
            yield chunk

    def close(self) -> None:
        try:
            self._inner.close()
        finally:
            self._trip.finish(self._status)


class RecordingAsyncTransport(httpx2.AsyncBaseTransport):
    def __init__(self, purpose: str, secrets: Sequence[str] = (),
                 inner: httpx2.AsyncBaseTransport | None = None) -> None:
        self._purpose, self._secrets = purpose, tuple(secrets)
        self._inner = inner or httpx2.AsyncHTTPTransport()

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        purpose = current_purpose(self._purpose)
        lock.guard(str(request.url), purpose)
        trip = _Trip(request, await request.aread(), purpose, self._secrets)
        trip.begin()
        try:
            response = await self._inner.handle_async_request(request)
        except BaseException as exc:
            trip.finish(None, type(exc).__name__)
            raise
        response.stream = _CountedAsyncStream(response.stream, trip, response.status_code)
        return response

    async def aclose(self) -> None:
        await self._inner.aclose()


class RecordingTransport(httpx2.BaseTransport):
    def __init__(self, purpose: str, secrets: Sequence[str] = (),
                 inner: httpx2.BaseTransport | None = None) -> None:
        self._purpose, self._secrets = purpose, tuple(secrets)
        self._inner = inner or httpx2.HTTPTransport()

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        purpose = current_purpose(self._purpose)
        lock.guard(str(request.url), purpose)
        trip = _Trip(request, request.read(), purpose, self._secrets)
        trip.begin()
        try:
            response = self._inner.handle_request(request)
        except BaseException as exc:
            trip.finish(None, type(exc).__name__)
            raise
        response.stream = _CountedStream(response.stream, trip, response.status_code)
        return response

    def close(self) -> None:
        self._inner.close()


def async_client(purpose: str, *, secrets: Sequence[str] = (),
                 factory: Callable[..., httpx2.AsyncClient] = httpx2.AsyncClient,
                 **options: Any) -> httpx2.AsyncClient:
    """An async HTTP client (``factory``: the openai SDK's own class, say) whose requests
    pass the lock and are recorded; ``secrets`` are removed from what is recorded."""
    return factory(transport=RecordingAsyncTransport(purpose, secrets), **options)


def client(purpose: str, *, secrets: Sequence[str] = (),
           factory: Callable[..., httpx2.Client] = httpx2.Client,
           **options: Any) -> httpx2.Client:
    """The synchronous twin of ``async_client`` (huggingface_hub's session, say)."""
    return factory(transport=RecordingTransport(purpose, secrets), **options)
