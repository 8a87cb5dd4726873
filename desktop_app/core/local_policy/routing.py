"""``RoutingPolicy``: the model decides, in a form a small model decides well.

Asked to answer or call a tool in one free turn, the bundled 0.5B model called a tool for
requests that only need words (a translation, a name for a bakery, a grammar fix), because
it has learnt that a turn with tools offered is a turn for calling them. Offered one more
tool that stands for "answer in your own words", it picks that tool (or a name no tool is
close to) for such requests and still picks the real tools for computing, looking up and
making things. The choice is read from the first few tokens of its reply, so it costs
little.

* "reply" → the request is answered as plain chat: no tools and no system turn of ours, so
  the template's own applies (under it the model answers a translation in the target
  language, under a tool-using system turn it answered in English).
* a tool → the first turn must call that tool (its arguments under the tool's schema),
  and the call is checked before it is made (``call_review``: made-up numbers, or words
  sent to a tool that computes, turn the run into a plain answer); the turns after it are
  free, so a request with several steps goes on as the model sees fit.
* a call of a tool that does not exist ("calculate_tip") → the model means to call
  something: it chooses again, its call's name held to the tools that only compute from
  what they are given and to "reply", and a call so chosen is made only when most of
  its numbers are the user's ("2 * 3 - 4 / 2 + 5 * 2 / 2 …" for why the sky is blue,
  asked by a 10-year-old, is not). Read as an answer, such calls had left sums with
  several numbers to the model's head.
* a first call of a tool that only computes, that fails when run ("18 miles" sent to the
  calculator) → the model chooses again the same way, without the tools that failed.
  Shown the error instead, it wrote the same call again, and the answer was the error.

After a turn in which a tool that makes or changes something (a table, a chart, a note, a
file) succeeded, the work is done: the answer is written from the trace. Left to go on, the
model made the same table again and again (seven calls, 309 s, dev split).

Nothing reads the request's words, so the decision holds in any language the model reads.
When documents are attached to the chat, they are searched first (the user attached them
to be used), and a file of the workspace that the request names by its exact name is read
first (``Tool.named_in``); this policy is for local models, so nothing leaves the computer.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from desktop_app.core.agent.policy import FirstTurnPlan
from desktop_app.core.llm.base import LLM, ChoosesTool, ToolChoice, ToolSpec
from desktop_app.core.llm.types import ToolCall
from desktop_app.core.local_policy.call_review import dry_run, review_call, without_unfounded
from desktop_app.core.tools.base import Tool, ToolRegistry, ToolResult

if TYPE_CHECKING:
    from desktop_app.core.agent.policy import RunView
    from desktop_app.core.agent.result import StepRecord

#: The stand-in for answering directly. Listed after the real tools: first in the list it
#: drew requests that need a tool (sums, conversions) as well (dev split).
REPLY = "reply"
REPLY_DESCRIPTION = ("Answer the user directly in your own words: explanations, writing, "
                     "translation, correcting text, advice, ideas and general knowledge")
DOCUMENT_SEARCH = "search_documents"
#: Tokens for the first call's arguments: a long report fits (about 1,000 words); a call
#: that repeats one table row until the context is full does not.
FIRST_CALL_MAX_TOKENS = 1536
#: The same for a tool that only computes from what it is given: a sum of twenty of the
#: user's numbers fits; "2 * 2 + 2 * 2 + …", written for a question with no number in it
#: until the bound above, took 144 s.
PURE_CALL_MAX_TOKENS = 256


class ReplyTool(Tool):
    """Offered only while the model decides; never run."""

    name = REPLY
    description = REPLY_DESCRIPTION
    parameters: dict[str, Any] = {  # noqa: RUF012 - read only, as every tool's schema
        "type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}

    async def run(self, args: dict[str, Any]) -> ToolResult:
        return ToolResult(text=str(args.get("text", "")))


async def _named_reads(registry: ToolRegistry, query: str) -> list[ToolCall]:
    """Calls of the read-only tools for what ``query`` names (``Tool.named_in``)."""
    calls: list[ToolCall] = []
    for tool in registry:
        if tool.read_only:
            for args in await tool.named_in(query):
                calls.append(ToolCall(id=f"call_named_{len(calls)}", name=tool.name,
                                      arguments=json.dumps(args)))
    return calls


def _checkable(registry: ToolRegistry) -> list[str]:
    """The tools a made-up call may be taken for: those that only compute from what they
    are given, and need something to compute from, so ``call_review`` can tell a call of
    them on the user's numbers from one on words or invented numbers. Taken for a tool
    that makes or saves something, such calls (for a limerick, a birthday message) would
    write what nobody asked for; taken for the clock, nothing could check them."""
    return [tool.name for tool in registry if tool.pure and tool.parameters.get("required")]


class RoutingPolicy:
    """Help for a local model: it chooses between answering and each tool first."""

    name = "routing"

    def __init__(self, llm: LLM) -> None:
        self._llm = llm

    async def before_first_turn(self, state: RunView) -> FirstTurnPlan:
        if not isinstance(self._llm, ChoosesTool) or not len(state.registry):
            return FirstTurnPlan()
        if DOCUMENT_SEARCH in state.registry:
            # The user attached documents to this chat to have them used: they are searched
            # first, and the model goes on from the passages (left to choose, it answered
            # questions about them from memory: 3 of 8 on the dev split).
            search = ToolCall(id="call_search_documents", name=DOCUMENT_SEARCH,
                              arguments=json.dumps({"query": state.query}))
            return FirstTurnPlan(calls=[search])
        named = await _named_reads(state.registry, state.query)
        if named:
            # What the request names by its exact name (a file in the workspace) is read
            # first, and the model goes on from it: left to choose, it answered questions
            # about the user's files from memory or with an SQL query (dev split).
            return FirstTurnPlan(calls=named)
        chosen = await self._llm.choose_tool(state.messages, self._offered(state.registry))
        if chosen is None or chosen == REPLY:
            return FirstTurnPlan(registry=ToolRegistry())
        if chosen not in state.registry:
            # The model began a call of a tool that does not exist ("calculate_tip",
            # "painting_3_walls"): it means to call something. Held to the tools whose
            # calls can be checked, and to answering, it chooses again (see _checkable).
            return await self._choose_again(state, tried=[])
        return await self._first_call(state, chosen)

    async def _first_call(self, state: RunView, chosen: str, from_user_only: bool = False,
                          tried: Sequence[str] = ()) -> FirstTurnPlan:
        """The first turn, a call of ``chosen`` under its schema, generated here so that it
        is checked before it is made (``call_review``): a call that should not be made
        turns the run into a plain answer, and one of a pure tool that fails is chosen
        again. ``from_user_only``: most of its numbers must be the user's own (today's
        date does not count). ``tried``: tools whose calls failed already."""
        forced: ToolChoice = {"type": "function", "function": {"name": chosen}}
        tool = state.registry.get(chosen)
        first = await self._llm.chat(state.messages, tools=state.registry.specs(),
                                     tool_choice=forced, temperature=state.temperature,
                                     max_tokens=PURE_CALL_MAX_TOKENS if tool.pure
                                     else FIRST_CALL_MAX_TOKENS)
        calls = first.message.tool_calls
        if not calls or calls[0].name != chosen:
            # No complete call within the bound (a table growing row by row until the
            # context is full took minutes on the held-out split): answer in words.
            return FirstTurnPlan(registry=ToolRegistry())
        if await review_call(calls[0], tool, state.messages, from_user_only=from_user_only):
            return FirstTurnPlan(registry=ToolRegistry())
        if await dry_run(calls[0], tool):
            # The call fails ("18 miles" or "220C * 9/5" sent to the calculator). Shown the
            # error, the model wrote the same call again, and the answer became the error.
            # It chooses again, among the other tools whose calls can be checked.
            return await self._choose_again(state, [*tried, chosen])
        return FirstTurnPlan(first_reply=first.message.model_copy(
            update={"tool_calls": await self.revise_calls(state, calls)}))

    async def _choose_again(self, state: RunView, tried: list[str]) -> FirstTurnPlan:
        """The model's choice held to the checkable tools not in ``tried``, and ``reply``
        (after a made-up name, or a first call that failed); a call so chosen is made only
        when most of its numbers are the user's own."""
        assert isinstance(self._llm, ChoosesTool)
        left = [name for name in _checkable(state.registry) if name not in tried]
        chosen = await self._llm.choose_among(state.messages, self._offered(state.registry),
                                              [*left, REPLY])
        if chosen is None or chosen not in left:
            return FirstTurnPlan(registry=ToolRegistry())
        return await self._first_call(state, chosen, from_user_only=True, tried=tried)

    async def revise_calls(self, state: RunView, calls: list[ToolCall]) -> list[ToolCall]:
        """Each call without the optional arguments nothing said supports: left with the
        time zone it added taken out, the model asked again for "UTC" on its next turn."""
        return [await without_unfounded(call, state.registry.get(call.name), state.messages)
                if call.name in state.registry else call for call in calls]

    def warm_tool_lists(self, registry: ToolRegistry) -> list[list[ToolSpec]]:
        return [self._offered(registry)] if len(registry) else []

    @staticmethod
    def _offered(registry: ToolRegistry) -> list[ToolSpec]:
        return [*registry.specs(), ReplyTool().spec()]

    async def after_tools(self, state: RunView, steps: list[StepRecord]) -> str | None:
        made = [step.tool for step in steps if step.made_something]
        return f"{made[0]} did what was asked" if made else None
