"""What ``LlamaCppLLM`` makes of requests and replies: OpenAI response formats in
llama-cpp-python's form, the sampling options a request may set, the tool calls a reply
holds (made-up names mapped to the offered tool they mean) and llama.cpp's errors as the
project's."""

from __future__ import annotations

import logging
import re
from typing import Any

from desktop_app.core.errors import ContextOverflowError, LLMError, LLMProviderError
from desktop_app.core.llm.tool_format import ToolCallSniffer, closest_tool
from desktop_app.core.llm.types import ToolCall

log = logging.getLogger(__name__)


def local_response_format(response_format: dict[str, Any] | None) -> dict[str, Any] | None:
    """Normalise OpenAI ``json_object``/``json_schema`` formats to llama-cpp-python's form."""
    if not response_format:
        return None
    kind = response_format.get("type")
    if kind == "json_object":
        schema = response_format.get("schema")
        return {"type": "json_object", **({"schema": schema} if schema else {})}
    if kind == "json_schema":
        schema = (response_format.get("json_schema") or {}).get("schema")
        return {"type": "json_object", **({"schema": schema} if schema else {})}
    return None


#: Sampling options of llama.cpp's chat completion that callers may set per request.
SAMPLING_OPTIONS = frozenset({"stop", "seed", "top_p", "presence_penalty",
                              "frequency_penalty", "response_format"})


#: Tokens enough for a call's opening up to its tool name (``<tool_call>\n{"name": "…"``).
CHOICE_TOKENS = 16
CALLED_NAME = re.compile(r'^\s*(?:<tool_call>\s*)?(?:```(?:json)?\s*)?\{\s*"name"\s*:\s*"([^"]+)"')


def known_calls(sniffer: ToolCallSniffer, offered: set[str]) -> list[ToolCall]:
    """The reply's calls, made-up tool names mapped to the offered tool they clearly mean
    (calls to nothing recognisable are dropped)."""
    if not sniffer.is_call:
        return []
    out = []
    for call in sniffer.parse().calls:
        name = closest_tool(call.name, offered)
        if name is None:
            # Only the name is logged: the arguments may hold what the user wrote.
            log.info("dropped a call to %r: no offered tool is close to that name",
                     call.name[:80])
            continue
        out.append(call if name == call.name else call.model_copy(update={"name": name}))
    return out


def with_ids(calls: list[ToolCall]) -> list[ToolCall]:
    return [c.model_copy(update={"id": f"call_{i}"}) for i, c in enumerate(calls)]


def translate_error(exc: Exception, name: str) -> LLMError:
    text = str(exc)
    if "exceed context window" in text:
        return ContextOverflowError(f"The prompt does not fit the context of '{name}': {text}.",
                                    hint="Start a new conversation or shorten the input.")
    error = LLMProviderError(f"The local model '{name}' failed: {type(exc).__name__}: {text}",
                             hint="Try again; if it keeps failing, check the model file.")
    error.__cause__ = exc
    return error
