"""Turning the middle of a conversation into one summary text.

With an LLM: the messages are rendered as a transcript and summarised with the hint's prompt.
A transcript too long for the compaction model's own window is split into chunks summarised
in rounds, each round merging the previous summary — the same way a later compaction merges
the summary of an earlier one. Without an LLM, or when the call fails or returns nothing
usable, a heuristic summary (the head of each message) stands in.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from desktop_app.core.context.prompts import (
    compaction_request,
    hint_prompt,
    is_summary,
    render_message,
    summary_body,
)
from desktop_app.core.context.tokens import MESSAGE_OVERHEAD, REPLY_PRIMING, TokenCounter
from desktop_app.core.context.truncation import truncate_text
from desktop_app.core.llm.base import LLM
from desktop_app.core.llm.types import ChatMessage, Usage

log = logging.getLogger(__name__)

#: Characters of each message the heuristic summary keeps.
HEURISTIC_SNIPPET_CHARS = 160
#: Tokens left free in the compaction model's window (template quirks, count drift).
_SAFETY_MARGIN = 64
#: Below this many tokens of transcript room a compaction call is pointless.
_MIN_TRANSCRIPT_TOKENS = 96
#: Rough tokens per word, to turn a token room into a word limit for the prompt.
_TOKENS_PER_WORD = 1.6


@dataclass
class SummaryOutcome:
    """A summary text and how it was made."""

    body: str
    method: Literal["llm", "fallback"]
    usage: Usage = field(default_factory=Usage)
    reason: str | None = None
    calls: int = 0


def heuristic_summary(messages: Sequence[ChatMessage], max_tokens: int,
                      counter: TokenCounter) -> str:
    """A summary made without a model: earlier summaries, then the head of every message.

    When it is too long the middle is cut (head and tail kept), so the oldest context and the
    most recent steps both survive.
    """
    lines: list[str] = []
    for message in messages:
        if is_summary(message):
            lines.append(summary_body(message).strip())
            continue
        text = " ".join(message.content.split())
        if len(text) > HEURISTIC_SNIPPET_CHARS:
            text = text[:HEURISTIC_SNIPPET_CHARS] + "…"
        if message.role == "tool":
            lines.append(f"- result of {message.name or 'tool'}: {text}")
        else:
            calls = ", ".join(f"{c.name}({c.arguments[:60]})" for c in message.tool_calls)
            label = "user" if message.role == "user" else message.role
            entry = f"- {label}: {text}" if text else f"- {label}:"
            lines.append(entry + (f" → called {calls}" if calls else ""))
    body = "(shortened without a model)\n" + "\n".join(line for line in lines if line)
    return truncate_text(body, max_tokens, counter)


def _goal_text(pinned: Sequence[ChatMessage], counter: TokenCounter, max_tokens: int) -> str:
    text = "\n".join(m.content for m in pinned if m.content)
    return truncate_text(text, max_tokens, counter)


def _chunk(entries: list[str], capacity: int, counter: TokenCounter) -> list[list[str]]:
    """Pack transcript entries into chunks of at most ``capacity`` tokens, in order."""
    chunks: list[list[str]] = [[]]
    used = 0
    for entry in entries:
        size = counter.count_text(entry) + 2
        if chunks[-1] and used + size > capacity:
            chunks.append([])
            used = 0
        chunks[-1].append(entry)
        used += size
    return [chunk for chunk in chunks if chunk]


async def summarise(
    messages: Sequence[ChatMessage],
    *,
    llm: LLM | None,
    hint: str,
    max_tokens: int,
    counter: TokenCounter,
    pinned: Sequence[ChatMessage] = (),
    max_rounds: int = 4,
) -> SummaryOutcome:
    """One summary of ``messages`` (which may include an earlier summary) within ``max_tokens``.

    ``pinned`` messages are shown to the summariser as the goal but stay verbatim elsewhere.
    Never raises for model failures: it falls back to :func:`heuristic_summary` and says why.
    """
    max_tokens = max(1, max_tokens)
    hint_prompt(hint, 0)  # unknown hints fail fast, also without a model
    if llm is None:
        return SummaryOutcome(heuristic_summary(messages, max_tokens, counter), "fallback",
                              reason="no compaction model configured")
    # A summary may take at most a fifth of the compaction model's own window, leaving room
    # for the previous summary and the transcript.
    max_tokens = min(max_tokens, max(32, llm.context_size // 5))
    system = hint_prompt(hint, int(max_tokens / _TOKENS_PER_WORD))
    previous = "\n".join(summary_body(m).strip() for m in messages if is_summary(m))
    previous = truncate_text(previous, max_tokens, counter)
    entries = [render_message(m) for m in messages if not is_summary(m)]
    goal = _goal_text(pinned, counter, max(32, min(256, llm.context_size // 8)))

    # What one round may spend on transcript: the compaction model's own window minus its
    # prompt, the previous summary (at its largest) and the reply.
    fixed = (counter.count_text(system) + counter.count_text(goal)
             + 3 * MESSAGE_OVERHEAD + REPLY_PRIMING + 40)
    capacity = llm.context_size - fixed - 2 * max_tokens - _SAFETY_MARGIN
    if capacity < _MIN_TRANSCRIPT_TOKENS:
        return SummaryOutcome(heuristic_summary(messages, max_tokens, counter), "fallback",
                              reason=f"the compaction model's window ({llm.context_size} tokens) "
                                     "has no room for a transcript")
    entries = [truncate_text(e, capacity // 2, counter) for e in entries]
    chunks = _chunk(entries, capacity, counter)
    if len(chunks) > max_rounds:
        # Too much for a bounded number of calls: the oldest part gets a heuristic summary
        # that the model rounds then merge, so nothing vanishes without a trace.
        dropped = sum(len(c) for c in chunks[:-max_rounds])
        seed = heuristic_summary([ChatMessage.user(e) for c in chunks[:-max_rounds] for e in c],
                                 max_tokens // 2, counter)
        previous = truncate_text(f"{previous}\n{seed}".strip(), max_tokens, counter)
        chunks = chunks[-max_rounds:]
        log.info("compaction: %d oldest transcript entries condensed heuristically", dropped)

    usage = Usage()
    calls = 0
    running = previous
    try:
        for chunk in chunks:
            request = [
                ChatMessage.system(system),
                ChatMessage.user(compaction_request(goal=goal, previous_summary=running,
                                                    transcript="\n\n".join(chunk))),
            ]
            result = await llm.chat(request, max_tokens=max_tokens, temperature=0.2)
            calls += 1
            usage = usage + result.usage
            text = result.message.content.strip()
            if not text:
                raise ValueError("the compaction model returned an empty summary")
            running = text
    except Exception as exc:  # noqa: BLE001 - falls back to truncation
        log.warning("compaction call failed (%s: %s); using heuristic truncation",
                    type(exc).__name__, exc)
        return SummaryOutcome(heuristic_summary(messages, max_tokens, counter), "fallback",
                              usage=usage, calls=calls,
                              reason=f"compaction call failed: {type(exc).__name__}: {exc}")
    if counter.count_text(running) > max_tokens:
        size = counter.count_text(running)
        return SummaryOutcome(truncate_text(running, max_tokens, counter), "fallback",
                              usage=usage, calls=calls,
                              reason=f"summary too long ({size} > {max_tokens} tokens); cut to fit")
    return SummaryOutcome(running, "llm", usage=usage, calls=calls)
