"""ContextGuard: keeps a conversation inside the model's token budget (SPEC §6).

Called at the top of every tool-loop iteration and when a long conversation is loaded:

1. Single oversized messages (a huge tool result, a pasted file) are cut to a share of the
   budget, keeping head and tail and marking the cut.
2. If the prompt is still over budget (or ``force`` is set after a provider overflow), the
   middle of the conversation is summarised into ONE summary message with the hint's prompt;
   an earlier summary is merged into the new one, so there is never more than one.
3. When the compaction call fails or its summary is too long, a heuristic truncation stands in.

Invariants of every result: leading system messages kept; every pinned message kept (the
user's query, every ``[USER INTERRUPT]``), in place; an assistant ``tool_calls`` message and
its ``tool`` messages are kept or removed together; at most one summary message, exactly one
whenever anything was summarised; chronological order; the result fits the budget. If the
system prompt and the pinned messages alone exceed the budget, their *content* is cut (largest
pinned message first, the system prompt last) rather than dropping them; only if even that
cannot fit — a budget smaller than the bare message overhead — ``ContextOverflowError`` is
raised.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from desktop_app.core.context.compaction import summarise
from desktop_app.core.context.groups import Group, split_groups, split_head
from desktop_app.core.context.prompts import (
    condensed_count,
    hint_prompt,
    is_summary,
    summary_message,
)
from desktop_app.core.context.tokens import (
    MESSAGE_OVERHEAD,
    TokenCounter,
    count_tools,
    prompt_overhead,
)
from desktop_app.core.context.truncation import truncate_message, truncate_text
from desktop_app.core.errors import ContextOverflowError
from desktop_app.core.llm.base import LLM, ToolSpec
from desktop_app.core.llm.types import ChatMessage, Usage

log = logging.getLogger(__name__)

#: Largest output reserve budget_for() takes by default (tokens kept free for the reply).
DEFAULT_OUTPUT_RESERVE = 1024
#: budget_for() never returns less than this (or half the window for tiny windows).
MIN_BUDGET = 256
#: A single non-pinned message may use at most this share of the budget.
SINGLE_MESSAGE_SHARE = 0.4
#: A forced compaction (after a provider overflow) aims this far below the budget, because
#: the provider just showed that our count was too optimistic.
FORCE_SHRINK = 0.7
#: Share of the budget reserved for the summary message, capped by ``max_summary_tokens``.
SUMMARY_SHARE = 0.25
MIN_SUMMARY_TOKENS = 24
#: Pinned messages and the system prompt are never cut below this many tokens of content.
MIN_PINNED_TOKENS = 24

Method = Literal["none", "truncate", "summary", "fallback"]


@dataclass
class CompactionResult:
    """What check_and_compact did: the messages to send next and the counts for the event.

    ``method``: ``none`` (unchanged), ``truncate`` (only single messages cut), ``summary``
    (middle summarised by the model) or ``fallback`` (heuristic summary or cut summary;
    ``reason`` says why). ``usage`` is the usage of the compaction calls.
    """

    messages: list[ChatMessage]
    compacted: bool
    original_count: int
    kept_count: int
    usage: Usage = field(default_factory=Usage)
    method: Method = "none"
    reason: str | None = None
    tokens_before: int = 0
    tokens_after: int = 0
    truncated_messages: int = 0
    #: (tokens before, tokens after) of pinned messages whose content had to be cut.
    pinned_cut: list[tuple[int, int]] = field(default_factory=list)


def default_output_reserve(context_size: int) -> int:
    """Tokens kept free for the reply: a quarter of the window, at most 1,024."""
    return min(DEFAULT_OUTPUT_RESERVE, max(64, context_size // 4))


class _BudgetFor:
    """``budget_for`` works on the class (default reserve) and on an instance (its reserve)."""

    def __init__(self, func: Callable[..., int]) -> None:
        self.func = func
        functools.update_wrapper(self, func)  # type: ignore[arg-type]

    def __get__(self, obj: Any, owner: type | None = None) -> Callable[..., int]:
        return functools.partial(self.func, obj)


class ContextGuard:
    """Enforces a token budget on a message list; see the module docstring for the rules."""

    def __init__(
        self,
        llm: LLM | None = None,
        *,
        counter: TokenCounter | None = None,
        output_reserve: int | None = None,
        single_message_share: float = SINGLE_MESSAGE_SHARE,
        max_summary_tokens: int = 600,
        force_keep_groups: int = 1,
        max_rounds: int = 4,
    ) -> None:
        """``llm`` writes the summaries (None: heuristic only); ``counter`` defaults to one
        counting with ``llm``'s tokenizer; ``output_reserve`` None means a quarter of the
        window, at most 1,024 tokens."""
        self.llm = llm
        self.counter = counter or TokenCounter(llm)
        self.output_reserve = output_reserve
        self.single_message_share = single_message_share
        self.max_summary_tokens = max_summary_tokens
        self.force_keep_groups = force_keep_groups
        self.max_rounds = max_rounds

    @_BudgetFor
    def budget_for(self_or_none: ContextGuard | None, llm: LLM,
                   output_reserve: int | None = None, *,
                   tools: Sequence[ToolSpec] | None = None) -> int:
        """Prompt budget for ``llm``: context size minus output reserve (and ``tools``' payload),
        never below a floor of 256 tokens (half the window for tiny windows)."""
        if output_reserve is None and self_or_none is not None:
            output_reserve = self_or_none.output_reserve
        if output_reserve is None:
            output_reserve = default_output_reserve(llm.context_size)
        counter = self_or_none.counter if self_or_none is not None else TokenCounter(llm)
        budget = llm.context_size - output_reserve - count_tools(tools, counter)
        return max(budget, min(MIN_BUDGET, llm.context_size // 2))

    async def check_and_compact(
        self,
        messages: list[ChatMessage],
        budget: int,
        hint: str = "react_iteration",
        *,
        force: bool = False,
    ) -> CompactionResult:
        """``messages`` made to fit ``budget`` tokens (see module docstring).

        ``force`` compacts even when the count says it fits (after a provider overflow), to
        ``FORCE_SHRINK`` of the budget, keeping at most ``force_keep_groups`` recent groups.
        The input list is not modified.
        """
        hint_prompt(hint, 100)  # unknown hints fail fast with a clear ValueError
        if budget <= 0:
            raise ValueError(f"budget must be a positive number of tokens, got {budget}")
        original = list(messages)
        counter = self.counter
        tokens_before = counter.count_messages(original)
        target = max(1, int(budget * FORCE_SHRINK)) if force else budget

        head, rest = split_head(original)
        rest, cut = self._cut_oversized(rest, target)
        working = head + rest
        if counter.count_messages(working) <= target and not force:
            return self._result(original, working, tokens_before, cut=cut,
                                method="truncate" if cut else "none")

        groups = split_groups(rest, counter)
        fixed = prompt_overhead(head) + sum(counter.count_message(m) for m in head) + sum(
            g.tokens for g in groups if g.pinned)
        room = target - fixed
        summary_room = min(max(MIN_SUMMARY_TOKENS, int(target * SUMMARY_SHARE)),
                           self.max_summary_tokens)
        middle = self._select_middle(groups, room - summary_room, force)
        if not middle:
            out, pinned_cut = self._fit(working, target)
            return self._result(original, out, tokens_before, cut=cut,
                                method="truncate" if out != original else "none",
                                pinned_cut=pinned_cut)

        removed = [m for i in middle for m in groups[i].messages]
        kept_tail = sum(g.tokens for i, g in enumerate(groups) if i not in middle and not g.pinned)
        # The summary may use whatever the kept messages leave, up to its cap.
        header = counter.count_text(summary_message("", condensed_count(removed)).content) + 2
        body_room = min(self.max_summary_tokens, room - kept_tail) - MESSAGE_OVERHEAD - header
        body_room = max(8, body_room)
        pinned = [m for g in groups if g.pinned for m in g.messages]
        outcome = await summarise(removed, llm=self.llm, hint=hint, max_tokens=body_room,
                                  counter=counter, pinned=pinned, max_rounds=self.max_rounds)
        summary = summary_message(outcome.body, condensed_count(removed))

        out = list(head)
        placed = False
        for index, group in enumerate(groups):
            if index in middle:
                if not placed:
                    out.append(summary)
                    placed = True
                continue
            out.extend(group.messages)
        out, pinned_cut = self._fit(out, target)
        method: Method = "summary" if outcome.method == "llm" else "fallback"
        log.info("context compacted (%s, hint %s): %d → %d messages, %d → %d tokens",
                 method, hint, len(original), len(out), tokens_before,
                 counter.count_messages(out))
        return self._result(original, out, tokens_before, cut=cut, method=method,
                            usage=outcome.usage, reason=outcome.reason, pinned_cut=pinned_cut)

    # --- steps -----------------------------------------------------------------------------
    def _cut_oversized(self, rest: list[ChatMessage], target: int) -> tuple[list[ChatMessage], int]:
        """Every non-pinned message cut to ``single_message_share`` of the budget."""
        cap = max(MIN_PINNED_TOKENS + MESSAGE_OVERHEAD, int(target * self.single_message_share))
        out: list[ChatMessage] = []
        cut = 0
        for message in rest:
            if not message.pinned and not is_summary(message) \
                    and self.counter.count_message(message) > cap:
                message = truncate_message(message, cap, self.counter)
                cut += 1
            out.append(message)
        return out, cut

    def _select_middle(self, groups: list[Group], recent_room: int, force: bool) -> set[int]:
        """Indexes of the groups to summarise: all non-pinned groups except the recent tail.

        The tail is contiguous from the end (pinned groups are skipped, they stay anyway) and
        stops at the first group that does not fit, cannot be kept verbatim, or is an earlier
        summary (which is always merged into the new one).
        """
        keep: set[int] = set()
        for index in reversed(range(len(groups))):
            group = groups[index]
            if group.pinned:
                continue
            if not group.keepable or group.tokens > recent_room:
                break
            if force and len(keep) >= self.force_keep_groups:
                break
            keep.add(index)
            recent_room -= group.tokens
        return {i for i, g in enumerate(groups) if not g.pinned and i not in keep}

    def _fit(self, messages: list[ChatMessage],
             target: int) -> tuple[list[ChatMessage], list[tuple[int, int]]]:
        """Last resort when kept messages still exceed ``target``: cut the summary, then the
        pinned messages (largest first), then the system prompt — content only, never a
        message. Returns the messages and (tokens before, after) of each pinned message it
        cut. Raises ContextOverflowError if even that cannot fit."""
        counter = self.counter
        out = list(messages)
        pinned_cut: list[tuple[int, int]] = []
        # First pass keeps a readable floor of every message; the second, for budgets that
        # cannot afford even that, keeps only the first words.
        stages = [(stage, floor) for floor in (MIN_PINNED_TOKENS, 4)
                  for stage in ("summary", "pinned", "system")]
        for stage, floor in stages:
            while (excess := counter.count_messages(out) - target) > 0:
                candidates = [i for i, m in enumerate(out) if _stage_of(m) == stage
                              and counter.count_text(m.content) > floor]
                if not candidates:
                    break
                index = max(candidates, key=lambda i: counter.count_text(out[i].content))
                message = out[index]
                size = counter.count_text(message.content)
                new_size = max(floor, size - excess)
                if stage == "summary":
                    title, _, body = message.content.partition("\n")
                    title_tokens = counter.count_text(title) + 1
                    if new_size > title_tokens:
                        content = f"{title}\n{truncate_text(body, new_size - title_tokens, counter)}"
                    else:
                        content = truncate_text(title, new_size, counter)
                    out[index] = message.model_copy(update={"content": content})
                else:
                    out[index] = truncate_message(
                        message, counter.count_message(message) - (size - new_size), counter)
                    if stage == "pinned":
                        pinned_cut.append((size, counter.count_text(out[index].content)))
                    log.info("context budget %d too small for the pinned messages; "
                                "cut a %s message from %d to %d tokens", target, stage, size,
                                counter.count_text(out[index].content))
                if counter.count_text(out[index].content) >= size:
                    break  # no progress possible for this message
        total = counter.count_messages(out)
        if total > target:
            raise ContextOverflowError(
                f"The context budget of {target} tokens cannot hold even the shortened system "
                f"prompt and pinned messages ({total} tokens).",
                hint="Use a model with a larger context window or a smaller output reserve.")
        return out, pinned_cut

    def _result(self, original: list[ChatMessage], out: list[ChatMessage], tokens_before: int,
                *, cut: int, method: Method, usage: Usage | None = None,
                reason: str | None = None,
                pinned_cut: list[tuple[int, int]] | None = None) -> CompactionResult:
        return CompactionResult(
            messages=out, compacted=out != original, original_count=len(original),
            kept_count=len(out), usage=usage or Usage(), method=method, reason=reason,
            tokens_before=tokens_before, tokens_after=self.counter.count_messages(out),
            truncated_messages=cut, pinned_cut=pinned_cut or [])


def _stage_of(message: ChatMessage) -> str:
    if is_summary(message):
        return "summary"
    if message.pinned:
        return "pinned"
    if message.role == "system":
        return "system"
    return "other"
