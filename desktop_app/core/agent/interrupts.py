"""User interrupts: follow-up messages sent while a run is working (SPEC §5).

Each conversation has one ``InterruptQueue``. The UI (or CLI) ``put``s messages at any time,
from any thread; the engine ``drain``s them between iterations and turns one drain into one
pinned ``[USER INTERRUPT]`` message, so compaction never drops it and the model sees all
follow-ups together instead of a fragmented series.
"""

from __future__ import annotations

import threading
from collections import deque

from desktop_app.core.llm.types import ChatMessage

INTERRUPT_TAG = "[USER INTERRUPT]"


class InterruptQueue:
    """Messages the user sent during a run, waiting to be injected. Thread-safe."""

    def __init__(self) -> None:
        self._items: deque[str] = deque()
        self._lock = threading.Lock()

    def put(self, text: str) -> None:
        """Queue a follow-up; blank messages are ignored."""
        if text and text.strip():
            with self._lock:
                self._items.append(text.strip())

    def drain(self) -> list[str]:
        """Take every queued message, oldest first."""
        with self._lock:
            items = list(self._items)
            self._items.clear()
        return items

    def peek(self) -> list[str]:
        """The queued messages without taking them."""
        with self._lock:
            return list(self._items)

    @property
    def pending(self) -> int:
        return len(self._items)

    def __repr__(self) -> str:
        return f"InterruptQueue(pending={self.pending})"


class InterruptQueues:
    """One ``InterruptQueue`` per conversation id, created on first use."""

    def __init__(self) -> None:
        self._queues: dict[str, InterruptQueue] = {}
        self._lock = threading.Lock()

    def get(self, conversation_id: str) -> InterruptQueue:
        with self._lock:
            return self._queues.setdefault(conversation_id, InterruptQueue())

    def discard(self, conversation_id: str) -> None:
        with self._lock:
            self._queues.pop(conversation_id, None)


def interrupt_message(texts: list[str]) -> ChatMessage:
    """One pinned user message holding every interrupt of one drain."""
    if len(texts) == 1:
        body = texts[0]
    else:
        body = "\n".join(f"{i}. {text}" for i, text in enumerate(texts, 1))
    content = (f"{INTERRUPT_TAG} While you were working, the user sent "
               f"{'this message' if len(texts) == 1 else 'these messages'}. Take "
               f"{'it' if len(texts) == 1 else 'them'} into account before you finish:\n{body}")
    return ChatMessage.user(content, pinned=True)
