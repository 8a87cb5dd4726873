"""What the requests made in a piece of code serve: a conversation, a message, a purpose.

Context variables, so an asyncio task started inside ``serving(...)`` (the agent's model
calls) and a worker thread started with ``contextvars.copy_context()`` carry it along.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass


@dataclass(frozen=True)
class Serving:
    conversation_id: str | None = None
    message_id: str | None = None


_serving: ContextVar[Serving | None] = ContextVar("egress_serving", default=None)
_purpose: ContextVar[str | None] = ContextVar("egress_purpose", default=None)


@contextlib.contextmanager
def serving(conversation_id: str | None, message_id: str | None = None) -> Iterator[None]:
    """Requests made inside this block serve that conversation (and message)."""
    token = _serving.set(Serving(conversation_id, message_id))
    try:
        yield
    finally:
        _serving.reset(token)


def serve_in_this_task(conversation_id: str | None, message_id: str | None = None) -> None:
    """Requests made from here to the end of the running asyncio task (its own context)
    serve that conversation and message."""
    _serving.set(Serving(conversation_id, message_id))


@contextlib.contextmanager
def purpose(name: str) -> Iterator[None]:
    """Requests made inside this block are for ``name`` ("download", "model search")."""
    token = _purpose.set(name)
    try:
        yield
    finally:
        _purpose.reset(token)


def current_serving() -> Serving:
    return _serving.get() or Serving()


def current_purpose(default: str) -> str:
    return _purpose.get() or default
