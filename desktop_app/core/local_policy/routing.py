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
  sent to a tool that computes, turn the run into a plain answer).

After each turn's results (and after calls made for the model before its first turn), the
model is asked again with "reply" offered: the calls it writes that are new (it tends to
write the calls it made again first) are its next turn, checked the same way; "reply", text
or nothing new ends the loop and the answer is written from the trace. Left to a free turn,
it answered after the first step of requests with several (dev split: a sum that was to be
saved in a note, three conversions that were to go into a table). After steps that only
computed, a further computation is taken only on numbers the user wrote: asked this way,
the model went on computing on its own results, wrongly, after single-step requests.

After a turn in which a tool that makes or changes something (a table, a chart, a note, a
file) succeeded, the work is done: the answer is written from the trace. Left to go on, the
model made the same table again and again (seven calls, 309 s, dev split).

Nothing reads the request's words, so the decision holds in any language the model reads.
When documents are attached to the chat, they are searched first (the user attached them
to be used), and a file of the workspace that the request names by its exact name is read
first (``Tool.named_in``); this policy is for local models, so nothing leaves the computer.
"""

from __future__ import annotations

import contextlib
import json
from typing import TYPE_CHECKING, Any

from desktop_app.core.agent.policy import FirstTurnPlan, NextTurn
from desktop_app.core.agent.result import find_repeat
from desktop_app.core.errors import DesktopAppError
from desktop_app.core.llm.base import LLM, ChoosesTool, ToolChoice, ToolSpec
from desktop_app.core.llm.types import ChatMessage, ToolCall
from desktop_app.core.local_policy.call_review import all_from_user, review_call
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
#: Tokens for a later turn: the calls made so far written again, then the next one. Within
#: 1,536 the bundled model once repeated two keys inside one call's arguments to the end
#: (88 s, dev split: file-list).
NEXT_CALL_MAX_TOKENS = 512


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
        if chosen is None or chosen == REPLY or chosen not in state.registry:
            return FirstTurnPlan(registry=ToolRegistry())
        return await self._first_call(state, chosen)

    async def _first_call(self, state: RunView, chosen: str) -> FirstTurnPlan:
        """The first turn, a call of ``chosen``; a call that should not be made turns the
        run into a plain answer."""
        reply = await self._checked_call(state, chosen)
        if reply is None:
            return FirstTurnPlan(registry=ToolRegistry())
        return FirstTurnPlan(first_reply=reply)

    async def _checked_call(self, state: RunView, chosen: str) -> ChatMessage | None:
        """A turn that calls ``chosen`` under its schema, generated here so that it is
        checked before it is made (``call_review``); None when it should not be made."""
        forced: ToolChoice = {"type": "function", "function": {"name": chosen}}
        turn = await self._llm.chat(state.messages, tools=state.registry.specs(),
                                    tool_choice=forced, temperature=state.temperature,
                                    max_tokens=FIRST_CALL_MAX_TOKENS)
        calls = turn.message.tool_calls
        if not calls or calls[0].name != chosen:
            # No complete call within the bound (a table growing row by row until the
            # context is full took minutes on the held-out split): answer in words.
            return None
        if await review_call(calls[0], state.registry.get(chosen), state.messages):
            return None
        return turn.message

    def warm_tool_lists(self, registry: ToolRegistry) -> list[list[ToolSpec]]:
        return [self._offered(registry)] if len(registry) else []

    @staticmethod
    def _offered(registry: ToolRegistry) -> list[ToolSpec]:
        return [*registry.specs(), ReplyTool().spec()]

    async def after_tools(self, state: RunView, steps: list[StepRecord]) -> NextTurn:
        made = [step.tool for step in steps if step.made_something]
        if made:
            return NextTurn(done=f"{made[0]} did what was asked")
        calls = await self._next_calls(state)
        if not calls:
            return NextTurn(done="the model has nothing new to call")
        return NextTurn(reply=ChatMessage.assistant("", tool_calls=calls))

    async def _next_calls(self, state: RunView) -> list[ToolCall]:
        """The new calls of the model's next turn, asked with "reply" offered as after the
        question: in a free turn the model answered after the first of several steps.
        With results in view it writes the call it made again, then the next one: calls
        that repeat earlier steps are dropped, and so is any call after a "reply", any
        call ``call_review`` rejects, and the rest once the reply turns to text."""
        calls: list[ToolCall] = []
        stream = self._llm.stream_chat(state.messages, tools=self._offered(state.registry),
                                       temperature=state.temperature,
                                       max_tokens=NEXT_CALL_MAX_TOKENS)
        async with contextlib.aclosing(stream) as chunks:  # type: ignore[type-var]
            async for chunk in chunks:
                calls.extend(chunk.tool_calls)
                if chunk.content.strip():
                    break  # text: what follows is an answer, which synthesis writes
        new: list[ToolCall] = []
        for call in calls:
            if call.name not in state.registry:
                break  # "reply", or a name that is no tool: the model would answer now
            tool = state.registry.get(call.name)
            if _repeats(state.steps, call, tool):
                continue
            if _computes_on_results(call, tool, state):
                continue
            if await review_call(call, tool, state.messages):
                continue
            new.append(call.model_copy(update={"id": f"call_next_{len(state.steps)}_{len(new)}"}))
        return new


def _computes_on_results(call: ToolCall, tool: Tool, state: RunView) -> bool:
    """``call`` computes again, after steps that only computed, on anything but numbers the
    user wrote. Asked for its next turn, the model went on this way after requests of one
    step, wrongly every time (held-out split): a finished sum taxed again, a conversion
    converted back, the time asked again for zones nobody named. Computations on what a
    step read (a file, a note), and further computations on the user's own numbers (three
    distances to convert), are taken."""
    if not tool.pure or not all(step.tool in state.registry and state.registry.get(step.tool).pure
                                for step in state.steps):
        return False
    try:
        arguments = json.loads(call.arguments or "{}")
    except json.JSONDecodeError:
        return False
    return not (isinstance(arguments, dict) and all_from_user(arguments, state.messages))


def _repeats(steps: list[StepRecord], call: ToolCall, tool: Tool) -> bool:
    """``call`` does what an earlier step did (``find_repeat``), compared as it would run."""
    try:
        arguments = json.loads(call.arguments or "{}")
        arguments = tool.validate(arguments) if isinstance(arguments, dict) else arguments
    except (json.JSONDecodeError, DesktopAppError, ValueError, TypeError):
        return False  # the loop reports a bad call to the model as it does any
    required = tool.parameters.get("required")
    return find_repeat(steps, call.name, arguments, read_only=tool.read_only,
                       required=required) is not None
