"""Token counting for context budgets (SPEC §6).

Exact counts come from the model's own tokenizer when the LLM has one
(``LLM.count_tokens`` returns an int, as the llama.cpp adapter does); otherwise an estimate:
ASCII text at about 4 characters a token, other scripts (CJK, Cyrillic, emoji, ...) at about
1.5, digits and punctuation counted denser (see :func:`estimate_tokens`). Every message adds a fixed overhead for the chat template's role markers, and tool calls
count their name and arguments, because providers send those to the model too.
"""

from __future__ import annotations

import json
import logging
import math
import string
from collections.abc import Sequence
from typing import Any

from desktop_app.core.llm.base import LLM
from desktop_app.core.llm.types import ChatMessage

log = logging.getLogger(__name__)

#: Tokens a chat template spends per message on role markers (ChatML: ``<|im_start|>role\n``
#: and ``<|im_end|>\n``); slightly generous so budgets err on the safe side.
MESSAGE_OVERHEAD = 5
#: Extra tokens per tool call (the JSON wrapper around name and arguments).
TOOL_CALL_OVERHEAD = 6
#: Tokens the template adds once to prime the reply (``<|im_start|>assistant\n``).
REPLY_PRIMING = 3
#: Per-tool overhead of the tools payload on top of its JSON text.
TOOL_SPEC_OVERHEAD = 4
#: Extra tokens of a tool result: local templates without a tool role wrap it in a label
#: (measured with the bundled Qwen model: ``[Result of tool 'calculator']`` ≈ 9 tokens).
TOOL_RESULT_OVERHEAD = 10
#: Some chat templates insert a default system prompt when a conversation has none (the
#: bundled Qwen model: "You are Qwen, created by Alibaba Cloud. ..." = 21 tokens measured).
IMPLICIT_SYSTEM_ALLOWANCE = 24

ASCII_CHARS_PER_TOKEN = 4.0
OTHER_CHARS_PER_TOKEN = 1.5
PUNCTUATION_CHARS_PER_TOKEN = 2.0
_DIGITS = string.digits
_PUNCTUATION = string.punctuation

# Bounded memo of exact counts: the guard recounts the same long messages every iteration,
# and tokenizing a 20,000-character tool result each time would be wasted work.
_CACHE_LIMIT = 4096


def estimate_tokens(text: str) -> int:
    """Estimated tokens of ``text``.

    ASCII letters and spaces ≈ 4 chars/token, other scripts (CJK, Cyrillic, emoji, ...)
    ≈ 1.5 chars/token. Two refinements measured against the bundled model's tokenizer keep
    number-heavy tool output from being undercounted 2-4x: every ASCII digit is one token
    (Llama/Qwen tokenizers split numbers into digits) and ASCII punctuation ≈ 2 chars/token
    (JSON braces, quotes, colons).
    """
    if not text:
        return 0
    ascii_chars = len(text.encode("ascii", "ignore"))  # C-speed count of ASCII characters
    other_chars = len(text) - ascii_chars
    digits = sum(text.count(d) for d in _DIGITS)
    punctuation = sum(text.count(p) for p in _PUNCTUATION)
    letters = ascii_chars - digits - punctuation
    return max(1, math.ceil(letters / ASCII_CHARS_PER_TOKEN + digits
                            + punctuation / PUNCTUATION_CHARS_PER_TOKEN
                            + other_chars / OTHER_CHARS_PER_TOKEN))


class TokenCounter:
    """Counts tokens of text, messages and tool payloads for one model.

    With an ``llm`` whose ``count_tokens`` returns an int the counts are exact; if it returns
    None (remote APIs) or fails, the counter estimates and stops asking that model.
    """

    def __init__(self, llm: LLM | None = None) -> None:
        self._llm = llm
        self._exact = llm is not None
        self._cache: dict[str, int] = {}

    @property
    def exact(self) -> bool:
        """Whether counts come from the model's tokenizer (known only after the first count)."""
        return self._exact

    def count_text(self, text: str) -> int:
        """Tokens of a plain string."""
        if not text:
            return 0
        if not self._exact or self._llm is None:
            return estimate_tokens(text)
        cached = self._cache.get(text)
        if cached is not None:
            return cached
        try:
            count = self._llm.count_tokens(text)
        except Exception as exc:  # noqa: BLE001 - falls back to estimates
            log.warning("count_tokens failed on %s (%s); estimating token counts instead",
                        self._llm.model_id, exc)
            count = None
        if not isinstance(count, int) or isinstance(count, bool):
            self._exact = False
            return estimate_tokens(text)
        if len(self._cache) >= _CACHE_LIMIT:
            self._cache.clear()
        self._cache[text] = count
        return count

    def count_message(self, message: ChatMessage) -> int:
        """Tokens one message costs in a prompt, overhead and tool calls included."""
        tokens = MESSAGE_OVERHEAD + self.count_text(message.content)
        for call in message.tool_calls:
            tokens += (TOOL_CALL_OVERHEAD + self.count_text(call.name)
                       + self.count_text(call.arguments) + self.count_text(call.id))
        if message.role == "tool":
            tokens += TOOL_RESULT_OVERHEAD + self.count_text(message.tool_call_id or "") \
                + self.count_text(message.name or "")
        return tokens

    def count_messages(self, messages: Sequence[ChatMessage]) -> int:
        """Tokens of a whole prompt: every message plus :func:`prompt_overhead`."""
        return prompt_overhead(messages) + sum(self.count_message(m) for m in messages)

    def count_tools(self, specs: Sequence[dict[str, Any]] | None) -> int:
        """Tokens the tools payload (OpenAI-style function specs) adds to a prompt."""
        return count_tools(specs, self)


def prompt_overhead(messages: Sequence[ChatMessage]) -> int:
    """Tokens a prompt costs beyond its messages: the reply priming, plus an allowance for a
    default system prompt when the conversation does not start with one."""
    has_system = bool(messages) and messages[0].role == "system"
    return REPLY_PRIMING + (0 if has_system else IMPLICIT_SYSTEM_ALLOWANCE)


def count_tools(specs: Sequence[dict[str, Any]] | None, counter: TokenCounter | None = None) -> int:
    """Tokens of a tools payload: its JSON text plus a small overhead per tool.

    Chat templates render the specs as JSON into the prompt, so the JSON text is what counts.
    """
    if not specs:
        return 0
    counter = counter or TokenCounter()
    return sum(TOOL_SPEC_OVERHEAD + counter.count_text(json.dumps(spec, ensure_ascii=False))
               for spec in specs)
