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

from dataclasses import replace

from desktop_app.core.llm.base import ToolChoice, ToolSpec
from desktop_app.core.llm.tool_format import ToolCallSniffer, parse_tool_reply
from desktop_app.core.llm.types import LLMResult, StreamChunk, ToolCall


def offered_names(tools: list[ToolSpec] | None, tool_choice: ToolChoice) -> set[str]:
    """The names a reply may call (none when tools are off for this request)."""
    if not tools or tool_choice == "none":
        return set()
    return {str(spec.get("function", {}).get("name", "")) for spec in tools} - {""}


def _known(calls: list[ToolCall], offered: set[str]) -> list[ToolCall]:
    return [call.model_copy(update={"id": call.id or f"call_text_{index}"})
            for index, call in enumerate(c for c in calls if c.name in offered)]


def with_text_calls(result: LLMResult, offered: set[str]) -> LLMResult:
    """``result`` with a call written in its text made a real call (the text dropped)."""
    message = result.message
    if not offered or message.tool_calls or not message.content:
        return result
    calls = _known(parse_tool_reply(message.content, offered).calls, offered)
    if not calls:
        return result
    return result.model_copy(update={
        "message": message.model_copy(update={"content": "", "tool_calls": calls}),
        "finish_reason": "tool_calls"})


class TextCallStream:
    """Holds back streamed text that may be a call written as text, until that is known.

    Prose flows through at once; a reply that opens like a call (a call tag, a JSON object,
    a JSON fence) is held until the stream ends, then becomes calls or, if it names no
    offered tool, is released as text.
    """

    def __init__(self, offered: set[str]) -> None:
        self._offered = offered
        self._sniffer = ToolCallSniffer(offered) if offered else None
        self._shown = 0  # what was released is always the start of the sniffer's text

    def feed(self, chunk: StreamChunk) -> StreamChunk | None:
        """A content or reasoning delta in; what may be shown now out (None: nothing)."""
        if self._sniffer is None or not chunk.content:
            return chunk
        shown = self._sniffer.feed(chunk.content)
        self._shown += len(shown)
        if not shown and not chunk.reasoning:
            return None
        return replace(chunk, content=shown)

    def finish(self, final: StreamChunk) -> StreamChunk:
        """The stream's final chunk, with the held-back text or the calls it held."""
        sniffer = self._sniffer
        if sniffer is None or final.tool_calls:
            return final
        if final.content:
            sniffer.feed(final.content)
        calls = _known(sniffer.parse().calls, self._offered) if sniffer.is_call else []
        if calls:
            return replace(final, content="", tool_calls=calls, finish_reason="tool_calls")
        # Not a call of anything offered (a made-up tool, JSON the user asked for): the
        # whole text is the answer, none of it lost.
        rest = sniffer.text[self._shown:]
        return replace(final, content=rest if self._shown else rest.lstrip())
