"""How full the model's context window will be when the user sends: the composer's gauge.

People on small local models (4k-8k windows) otherwise learn only after sending that the
start of their conversation was summarised away. The numbers are estimates (no tokenizer
is loaded for this; ``estimate_tokens`` errs on the high side) of what the next request
carries: the system prompt, the tool descriptions, the stored conversation and the draft.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from desktop_app.core.context.tokens import TokenCounter, estimate_tokens
from desktop_app.core.llm.types import ChatMessage

#: Above this share of the window the gauge warns; above ``FULL`` it says what will happen.
HIGH = 0.7
FULL = 0.9

Level = Literal["ok", "high", "full"]


def base_tokens(history: Sequence[ChatMessage], *, system_prompt: str,
                tool_specs: Sequence[dict[str, Any]] | None) -> int:
    """Estimated tokens of the next request before the user's new message."""
    counter = TokenCounter()  # estimates: no model needs to be loaded for the gauge
    messages = [ChatMessage.system(system_prompt), *history]
    return counter.count_messages(messages) + counter.count_tools(tool_specs)


@dataclass(frozen=True, slots=True)
class ContextFill:
    """Tokens the next request will use of a window of ``limit``."""

    used: int
    limit: int

    @classmethod
    def with_draft(cls, base: int, draft: str, limit: int) -> ContextFill:
        # The message's own template overhead (role markers) is small and already covered
        # by the estimate erring high.
        return cls(base + (estimate_tokens(draft) if draft.strip() else 0), limit)

    @property
    def fraction(self) -> float:
        return self.used / self.limit if self.limit > 0 else 0.0

    @property
    def level(self) -> Level:
        if self.fraction >= FULL:
            return "full"
        return "high" if self.fraction >= HIGH else "ok"

    def label(self) -> str:
        """``Context 1.2k / 8.2k`` — short enough for the composer's corner."""
        return f"Context {_short(self.used)} / {_short(self.limit)}"

    def explanation(self) -> str:
        """The tooltip: the numbers and what happens next."""
        text = (f"About {self.used:,} of the model's {self.limit:,} tokens "
                f"({self.fraction:.0%}) will be used by the next message: instructions, "
                "tool descriptions, this conversation and what you typed.")
        if self.level == "full":
            text += (" That is nearly all of it: the oldest messages will be summarised (pinned "
                     "ones are kept), and a longer message may be cut. A model with a larger "
                     "context, or a new chat, avoids that.")
        elif self.level == "high":
            text += " When it fills up, the oldest messages are summarised."
        return text


def _short(tokens: int) -> str:
    if tokens < 1000:
        return str(tokens)
    return f"{tokens / 1000:.1f}k".replace(".0k", "k")
