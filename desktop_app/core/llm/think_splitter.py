"""Split ``<think>...</think>`` reasoning out of model text, also when tags span chunks.

Reasoning models served through OpenAI-compatible APIs (Qwen3, QwQ, DeepSeek-R1 distills on
llama.cpp / Ollama / LM Studio) often put their reasoning into the normal ``content`` wrapped
in ``<think>`` tags instead of a separate ``reasoning_content`` field. ``ThinkSplitter`` is an
I/O-free incremental parser: feed it content deltas as they arrive and it returns what is
visible answer text and what is reasoning, holding back only the few characters that might
be the start of a tag. The output never depends on where the stream was cut into chunks.

Rules (chosen so an answer that merely *mentions* the tag is not swallowed):
- A think block is recognised only at the start of the message (leading whitespace allowed).
- Whitespace right after ``<think>``, right before ``</think>`` and right after
  ``</think>`` is dropped: templates surround the block with newlines that are noise.
- A block the model never closes (cut off by ``max_tokens``) is all reasoning.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum, auto

OPEN_TAG = "<think>"
CLOSE_TAG = "</think>"


class _State(Enum):
    START = auto()  # nothing visible yet: a <think> may still come
    THINK_START = auto()  # just opened: drop the whitespace the template puts after it
    THINK = auto()  # inside the block
    AFTER = auto()  # just closed: drop the whitespace the template puts after the block
    CONTENT = auto()  # plain answer text until the end


@dataclass(frozen=True, slots=True)
class Split:
    """What one ``feed`` or ``flush`` produced."""

    content: str = ""
    reasoning: str = ""

    def __bool__(self) -> bool:
        return bool(self.content or self.reasoning)


def _partial_suffix(text: str, tag: str) -> int:
    """Length of the longest suffix of ``text`` that is a proper prefix of ``tag``."""
    for size in range(min(len(text), len(tag) - 1), 0, -1):
        if tag.startswith(text[-size:]):
            return size
    return 0


class ThinkSplitter:
    """Incremental ``<think>`` parser for one message; create a new one per message."""

    def __init__(self, *, inside: bool = False) -> None:
        """``inside``: the prompt already opened the block (R1-distill and some Qwen3
        templates end the generation prompt with ``<think>``), so the model's text starts
        as reasoning and only a ``</think>`` ends it."""
        self._state = _State.THINK_START if inside else _State.START
        self._pending = ""  # held back: a possible tag start, or whitespace we may drop

    @property
    def in_think(self) -> bool:
        """True while inside an open think block."""
        return self._state in (_State.THINK_START, _State.THINK)

    def feed(self, text: str) -> Split:
        """Consume the next piece of content; return what can be released now."""
        if not text:
            return Split()
        content: list[str] = []
        reasoning: list[str] = []
        buffer = self._pending + text
        self._pending = ""
        while buffer:
            if self._state is _State.START:
                stripped = buffer.lstrip()
                if stripped.startswith(OPEN_TAG):
                    self._state = _State.THINK_START
                    buffer = stripped[len(OPEN_TAG):]
                    continue
                if not stripped or OPEN_TAG.startswith(stripped):
                    self._pending = buffer  # could still become "<think>"
                    break
                self._state = _State.CONTENT
                content.append(buffer)
                break
            if self._state is _State.THINK_START:
                buffer = buffer.lstrip()
                if buffer:
                    self._state = _State.THINK
                continue
            if self._state is _State.THINK:
                end = buffer.find(CLOSE_TAG)
                if end >= 0:
                    reasoning.append(buffer[:end].rstrip())
                    self._state = _State.AFTER
                    buffer = buffer[end + len(CLOSE_TAG):]
                    continue
                hold = _partial_suffix(buffer, CLOSE_TAG)
                body = buffer[:len(buffer) - hold]
                # Trailing whitespace is held too: it is dropped if "</think>" follows.
                kept = body.rstrip()
                reasoning.append(kept)
                self._pending = body[len(kept):] + buffer[len(buffer) - hold:]
                break
            if self._state is _State.AFTER:
                buffer = buffer.lstrip()
                if buffer:
                    self._state = _State.CONTENT
                    content.append(buffer)
                break
            content.append(buffer)
            break
        return Split("".join(content), "".join(reasoning))

    def flush(self) -> Split:
        """The end of the message: release whatever was held back."""
        pending, self._pending = self._pending, ""
        if self._state is _State.START:
            # "<thi" at the very end of a message is text, not a tag.
            return Split(content=pending)
        if self._state in (_State.THINK, _State.THINK_START):
            # An unclosed block: trailing whitespace is dropped, a partial "</thi" is reasoning.
            return Split(reasoning=pending.rstrip())
        return Split()


def split_think(text: str) -> tuple[str, str]:
    """Split a complete message into ``(content, reasoning)``."""
    splitter = ThinkSplitter()
    first = splitter.feed(text)
    last = splitter.flush()
    return first.content + last.content, first.reasoning + last.reasoning
