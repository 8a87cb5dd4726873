"""Requests that chain actions, taken one step at a time.

"Calculate 15% of 240 and save the result in a note titled 'Tip'", "Convert 10 miles to
kilometres, then multiply the result by 3". Given the whole request, the bundled 0.5B model
did one of the two actions (or none) and answered: 0 of 7 chained tasks of the everyday
suite. Told one step at a time, with the earlier results above it, a small model only has
to do one thing per turn.

Only clear chaining is split: a ", then" / "; then" / ". Then", or "and" followed by a
command to store or show the result ("and save it in a note", "and show the results in a
table", "and add the two results"). Everything else stays one request, so a question that
merely contains "and" is never cut up.
"""

from __future__ import annotations

import re
from typing import Any

from desktop_app.core.agent.intents import commanded_tool
from desktop_app.core.agent.state import RunState
from desktop_app.core.llm.base import ToolChoice
from desktop_app.core.llm.types import ChatMessage
from desktop_app.core.tools.base import ToolRegistry

#: Verbs that start a step after "and" (a command, not a noun phrase: "salt and pepper").
_STEP_VERBS = (
    r"save|store|put|write|record|note|keep|show|list|display|present|make|create|draw|"
    r"plot|chart|add|sum|total|multiply|divide|subtract|convert|compute|calculate|"
    r"round|compare|tell|split|share|double|halve"
)
#: What a later step refers back to: without such a word "and" joins two independent
#: parts of one action ("find the time in London and in Sydney").
_BACK_REFERENCE = re.compile(
    r"\b(?:it|them|both|results?|totals?|answers?|numbers?|values?|sums?|products?|"
    r"that|those|these|each|all)\b", re.IGNORECASE)
_THEN = re.compile(r"(?:\s*[,;]\s*|\s*\.\s+|\s+)(?:and\s+)?then\s*[,:]?\s+", re.IGNORECASE)
_AND_STEP = re.compile(rf"\s*,?\s+and\s+(?=(?:{_STEP_VERBS})\b)", re.IGNORECASE)
#: A new sentence that is a command ("A dinner costs 156.80 plus a 12% tip. Split the total
#: among 4 people."): a step when it refers back, like "and" above.
_SENTENCE_STEP = re.compile(rf"(?<=[.!])\s+(?=(?:{_STEP_VERBS})\b)", re.IGNORECASE)

_VERB_AT_START = re.compile(rf"^(?:{_STEP_VERBS})\b", re.IGNORECASE)

#: Where a step that names no tool of its own sends its result.
_STEP_TOOLS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern, re.IGNORECASE), tool) for pattern, tool in (
        (r"\b(?:chart|graph|plot)\b", "make_chart"),
        (r"\btable\b", "make_table"),
        (r"\breport\b", "make_report"),
        (r"\bnote\b", "note_create"),
        # Arithmetic on earlier results. Forced to pick "some tool" for "add the two
        # results", the bundled model picked date_calc or current_time 3 times out of 4.
        (r"^(?:add|sum|total|multiply|divide|subtract|compute|calculate|work out)\b",
         "calculator"),
        (r"^convert\b", "convert_units"),
    ))
#: A step about a file is the file tool's (the model picks it): "total the amounts in
#: expenses.csv" must read the file, not guess numbers for the calculator.
_NAMES_FILE = re.compile(r"\b[\w-]+\.[A-Za-z]{2,4}\b")


#: "Save a note titled 'X' with the current time in Tokyo": what the note should hold has
#: to be looked up first. Forced to write the note at once, the bundled model wrote "The
#: current time in Tokyo" into it.
_SAVE_LOOKUP = re.compile(
    r"^(?P<save>(?:please\s+)?(?:save|create|make|write|add)\s+(?:a\s+)?note\b.*?)\s+"
    r"(?:with|containing|holding)\s+(?P<fact>(?:the\s+(?:current|latest|result|total|sum)|"
    r"today'?s|the\s+date|the\s+time)\b.*?)[.!]?$", re.IGNORECASE)


def split_steps(request: str) -> list[str]:
    """The steps of a chained request, in order; one element when it is not chained."""
    text = request.strip()
    if "\n" in text or len(text) > 400:
        return [text]  # a pasted document or a long brief: the model reads it whole
    lookup = _SAVE_LOOKUP.match(text)
    if lookup:
        return [f"Find {lookup.group('fact')}", f"{_tidy(lookup.group('save'))} with it."]
    parts = [p for p in _THEN.split(text) if p.strip()]
    steps: list[str] = []
    for index, part in enumerate(parts):
        for number, sentence in enumerate(_SENTENCE_STEP.split(part)):
            pieces = _AND_STEP.split(sentence)
            if number == 0:
                steps.append(pieces[0])
            elif _BACK_REFERENCE.search(pieces[0]) and _VERB_AT_START.match(steps[-1]):
                steps.append(pieces[0])  # a command after a command
            else:
                steps[-1] = f"{steps[-1]} {pieces[0]}"  # facts, then what to do with them
            for piece in pieces[1:]:
                if _BACK_REFERENCE.search(piece):
                    steps.append(piece)
                else:
                    steps[-1] = f"{steps[-1]} and {piece}"
        if index and not steps[-1]:
            steps.pop()
    steps = [s for s in steps if len(s.split()) >= 2]
    for index in range(1, len(steps)):
        steps[index] = _with_verb(steps[index], steps[index - 1])
    steps = [_tidy(s) for s in steps]
    return steps if len(steps) >= 2 else [text]


def _last_sentence(text: str) -> str:
    return re.split(r"[.!?]\s+", text.strip())[-1]


def _with_verb(step: str, previous: str) -> str:
    """"Compute the monthly total, then the yearly total": the second step borrows the
    first one's verb ("the yearly total" alone is not something to do)."""
    if not re.match(r"(?:the|its|their|a|an)\b", step.strip(), re.IGNORECASE):
        return step
    verb = _VERB_AT_START.match(_last_sentence(previous))
    return f"{verb.group(0).lower()} {step.strip()}" if verb else step


def _tidy(step: str) -> str:
    step = step.strip().rstrip(",;")
    return step[:1].upper() + step[1:]


def step_tool(step: str, registry: ToolRegistry) -> str | None:
    """The tool a later step must call: its own command ("save a note …"), else where it
    sends its result ("… in a note titled 'Tip'", "… in a table")."""
    named = commanded_tool(step, registry)
    if named is not None:
        return named
    if _NAMES_FILE.search(step):
        return None
    last_sentence = _last_sentence(step)
    for pattern, tool in _STEP_TOOLS:
        if pattern.pattern.startswith("^"):
            if pattern.search(last_sentence) and tool in registry:
                return tool
            continue
        if pattern.search(step) and tool in registry:
            return tool
    return None


def call_of(tool: str | None) -> ToolChoice:
    """``tool_choice`` forcing ``tool``; ``"required"`` (some tool) when none is named."""
    return {"type": "function", "function": {"name": tool}} if tool else "required"


def begin_steps(state: RunState, steps: list[str]) -> None:
    """Start a chained request at its first step: the question names it, and the first
    turn must call a tool (the one the step names, if it names one)."""
    state.request_steps = steps
    state.step_index = 0
    assert state.messages and state.messages[-1].role == "user"
    state.messages[-1] = first_step_message(state.query, steps)
    # The first step may need several calls ("convert 5 km, 10 km and 21.1 km"): it ends
    # when the model stops calling tools, unless it is a command like "make a table".
    state.commanded_tool = commanded_tool(steps[0], state.registry)
    state.next_tool_choice = call_of(step_tool(steps[0], state.registry))


def advance_step(state: RunState) -> bool:
    """Hand the model the next step, if any is left; False when the request is done.

    A later step is one action on earlier results ("then multiply the result by 3"): it
    ends with its first successful call. Left to go on, the bundled model multiplied the
    new result by 3 again, ten times."""
    if not state.steps_pending:
        return False
    state.step_index += 1
    state.messages.append(next_step_message(state.request_steps, state.step_index))
    state.commanded_tool = step_tool(state.request_steps[state.step_index], state.registry)
    state.next_tool_choice = call_of(state.commanded_tool)
    state.command_retries = 0
    return True


def first_step_message(request: str, steps: list[str]) -> ChatMessage:
    """The run's question when it is split: the whole request, and where to start."""
    return ChatMessage.user(f"{request}\n\nStep 1 of {len(steps)}: {steps[0]}", pinned=True)


def next_step_message(steps: list[str], index: int) -> ChatMessage:
    """The user turn that hands the model step ``index`` (0-based) of ``steps``."""
    return ChatMessage.user(
        f"Step {index + 1} of {len(steps)}: {steps[index]}\n"
        "Use the results above.", pinned=True)


def chain_draft(state: RunState) -> str:
    """The draft answer of a finished chain: the last result computed or looked up, and
    what the last step did with it ("0.15 * 240 = 36" / "Saved note 'Tip'…").

    Offered as the draft, the synthesis states these instead of redoing the chain in prose
    (which the bundled model got wrong) or repeating the question (which it did when the
    last step only saved a note)."""
    done = [step for step in state.steps if step.error is None and step.observation]
    if not done:
        return ""

    def line(step: Any) -> str:
        return step.observation.strip().splitlines()[0]

    def read_only(step: Any) -> bool:
        return step.tool in state.registry and state.registry.get(step.tool).read_only

    computed = [step for step in done if read_only(step)]
    lines = [line(computed[-1])] if computed else []
    if not read_only(done[-1]):
        lines.append(line(done[-1]))
    return "\n".join(lines)
