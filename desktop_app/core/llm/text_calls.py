"""Tool calls that an OpenAI-compatible server hands back as text.

A server that formats the prompt with the model's own chat template but has no parser for
the model's call format returns the call in ``content``: llama-cpp-python's server run the
way its README starts it (the GGUF's template, no ``--chat_format``), and others like it.
The bundled Qwen model behind it answered "What is 1234 * 5678?" with the content
``{"name": "calculator", "arguments": {"expression": "1234 * 5678"}}`` and no ``tool_calls``.
Read as an answer, that JSON reached the user and no tool ever ran.

So when tools were offered and the reply carries no structured calls, its text is read with
the parser the local adapter uses for the same formats (``tool_format``). Only calls naming
an offered tool exactly count: JSON that a user asked for comes back as JSON, and no
made-up tool name is guessed at for a model the app does not run itself.
"""

from __future__ import annotations

import logging
from dataclasses import replace

from desktop_app.core.llm.base import ToolChoice, ToolSpec
from desktop_app.core.llm.tool_format import (
    OPEN_TAGS,
    ToolCallSniffer,
    opening_kind,
    parse_tool_reply,
)
from desktop_app.core.llm.types import LLMResult, StreamChunk, ToolCall

log = logging.getLogger(__name__)


def offered_names(tools: list[ToolSpec] | None, tool_choice: ToolChoice) -> set[str]:
    """The names a reply may call (none when tools are off for this request)."""
    if not tools or tool_choice == "none":
        return set()
    return {str(spec.get("function", {}).get("name", "")) for spec in tools} - {""}


#: How a reply that is a call opens; a call quoted after some prose is not one.
_CALL_OPENINGS = (*OPEN_TAGS, "{", "[", "```")
#: What the start of a bare call looks like, whitespace removed.
_BARE_STARTS = ('{"name"', '{"type"', '{"function"', '[{"name"', '[{"type"', '[{"function"')


def _known(calls: list[ToolCall], offered: set[str]) -> list[ToolCall]:
    for call in calls:
        if call.name not in offered:
            log.info("dropped a text call to %r: not an offered tool", call.name[:80])
    return [call.model_copy(update={"id": call.id or f"call_text_{index}"})
            for index, call in enumerate(c for c in calls if c.name in offered)]


def _opens_with_call(text: str) -> bool:
    return text.lstrip().startswith(_CALL_OPENINGS)


def could_open_a_call(text: str) -> bool:
    """False once the start of ``text`` cannot become a call any more (a Markdown link,
    a citation, JSON whose first key is not a call's): it may be shown at once."""
    kind = opening_kind(text)
    if kind != "call":
        return kind is None
    head = text.lstrip()
    if head.startswith(OPEN_TAGS):
        return True
    if head.startswith("```"):
        head = head.partition("\n")[2].lstrip()
    compact = "".join(head[:40].split())
    return any(start.startswith(compact) or compact.startswith(start) for start in _BARE_STARTS)


def with_text_calls(result: LLMResult, offered: set[str]) -> LLMResult:
    """``result`` with a reply that is a call written as text made a real call."""
    message = result.message
    if (not offered or message.tool_calls or not message.content
            or result.finish_reason == "length" or not _opens_with_call(message.content)):
        return result  # a call cut off by the token limit is not made
    parsed = parse_tool_reply(message.content, offered)
    calls = _known(parsed.calls, offered)
    if not calls or parsed.content:
        return result
    return result.model_copy(update={
        "message": message.model_copy(update={"content": "", "tool_calls": calls}),
        "finish_reason": "tool_calls"})


class TextCallStream:
    """Holds back streamed text that may be a call written as text, until that is known.

    Prose flows through at once, and so does text whose start can no longer be a call; a
    reply that opens like a call is held until the call is complete (``complete``: the
    reader may stop there) or the stream ends, then becomes calls or is released as text.
    A call tag after some prose is part of the answer.
    """

    def __init__(self, offered: set[str]) -> None:
        self._offered = offered
        self._sniffer = ToolCallSniffer(offered) if offered else None
        self._shown = 0  # what was released is always the start of the sniffer's text

    def feed(self, chunk: StreamChunk) -> StreamChunk | None:
        """A content or reasoning delta in; what may be shown now out (None: nothing)."""
        sniffer = self._sniffer
        if sniffer is None or not chunk.content:
            return chunk
        shown = sniffer.feed(chunk.content)
        self._shown += len(shown)
        if not sniffer.is_answer and (self._shown or not could_open_a_call(sniffer.text)):
            # Held text that is not a call after all: show it, and the rest as it comes.
            shown += sniffer.text[self._shown:] if self._shown else sniffer.text.lstrip()
            self._sniffer = None
        if not shown and not chunk.reasoning:
            return None
        return replace(chunk, content=shown)

    def complete(self) -> bool:
        """The reply opened with a call that is now whole: the rest need not be read (the
        bundled model repeats a bare call line after line until its token limit)."""
        return self._sniffer is not None and self._sniffer.complete()

    def finish(self, final: StreamChunk) -> StreamChunk:
        """The stream's final chunk, with the held-back text or the calls it held."""
        sniffer = self._sniffer
        if sniffer is None:
            return final
        if final.content:
            sniffer.feed(final.content)
        calls = []
        if sniffer.is_call and final.finish_reason != "length" and not final.tool_calls:
            calls = _known(sniffer.parse().calls, self._offered)
        if calls:
            return replace(final, content="", tool_calls=calls, finish_reason="tool_calls")
        # Not a call of anything offered (a made-up tool, JSON the user asked for, a call
        # cut off by the token limit, or the server's own calls came): all of the text is
        # the answer, none of it lost.
        rest = sniffer.text[self._shown:]
        return replace(final, content=rest if self._shown else rest.lstrip())
