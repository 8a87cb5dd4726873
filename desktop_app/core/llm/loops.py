"""Degenerate repetition: a small model decoding greedily can fall into a loop and write
the same few tokens until its token limit, in an answer or inside a call's arguments.

``repeated_tail`` finds such a loop at the end of a text; the agent's ``RepetitionGuard``
stops answers with it, the local adapter calls (``cut_looping_call``).
"""

from __future__ import annotations

import re

from desktop_app.core.llm.json_extract import ends_inside_string
from desktop_app.core.llm.tool_format import OPEN_TAGS

#: A loop is the same piece of text with a letter in it, at least ``MIN_UNIT`` characters
#: long, at least ``MIN_REPEATS`` times in a row and ``MIN_SPAN`` characters in all. Units
#: without a letter are left alone: rules ("-----"), table separators ("| --- | --- |")
#: and digits repeat legitimately, and so do lines: a song's chorus, a checklist. (The
#: answer guard also leaves code inside a code block alone: code repeats itself.) A unit
#: holding a line break needs ``MIN_LINE_REPEATS`` copies; a real degenerate loop repeats far more
#: often than any text does on purpose.
MIN_UNIT = 4
MIN_REPEATS = 8
MIN_SPAN = 160
#: Whole lines repeat on purpose (a chorus, a checklist, rows of a table) but not this
#: often: a unit that holds a line break is a loop only from here on. Without it a table
#: row written again and again ran on to the context limit (minutes on 2 cores).
MIN_LINE_REPEATS = 16
MIN_LINE_SPAN = 480
#: Code fences with nothing between them ("``` ``` ```") hold no letter, yet no one writes
#: them on purpose; and each one opens or closes a code block, so such a loop also looks
#: like code. A unit that holds a fence is a loop wherever it repeats, and one of bare
#: fences already at ``EMPTY_FENCE_REPEATS`` copies (two empty code blocks in a row). Fresh
#: phrasings, third set: an answer of "``` " ran until the task's 300 s limit.
FENCE = "```"
EMPTY_FENCE_REPEATS = 4
#: Longest unit looked for (a repeated paragraph longer than this is rare and costs more to
#: look for on every token than it saves).
MAX_UNIT = 240
#: One digit, or a few, written on and on is no value a call can hold, though it holds no
#: letter. Made to call the calculator for how to say "thank you" in German, the bundled
#: model wrote "1000…" until the token limit (106 s; fresh phrasings, fourth set); asked
#: for 12 L in US gallons, "12 * 3.7854398543985439854…" (two calls, 434 s; held-out
#: split). It writes digits one token each, so a run of digits that repeats a piece of up
#: to ``RUNAWAY_PERIOD`` digits is cut at ``RUNAWAY_DIGITS`` (no real number does that for
#: so long). Blanks run away too (a grammar lets JSON hold any amount of them), but code
#: indents with them: a blank run is cut at ``MIN_SPAN``. A list of numbers ("0, 0, 0, …")
#: is no such run and is left alone.
RUNAWAY_DIGITS = 48
RUNAWAY_PERIOD = 8
_DIGIT_RUN = re.compile(rf"[0-9]{{{RUNAWAY_DIGITS},}}\Z")
_BLANK_RUN = re.compile(rf"(\s)\1{{{MIN_SPAN - 1},}}\Z")


def _runs_away(tail: str) -> bool:
    """``tail`` ends in a blank run or in a digit run that repeats itself (see above)."""
    if _BLANK_RUN.search(tail):
        return True
    run = _DIGIT_RUN.search(tail)
    if run is None:
        return False
    digits = run.group()[-RUNAWAY_DIGITS:]
    return any(digits[period:] == digits[:-period] for period in range(1, RUNAWAY_PERIOD + 1))


def repeated_tail(text: str) -> tuple[str, int] | None:
    """``(unit, times)`` when ``text`` ends in a loop (see ``MIN_UNIT``…), the shortest
    such unit; else None."""
    longest = min(MAX_UNIT, len(text) // MIN_REPEATS)
    for size in range(MIN_UNIT, longest + 1):
        unit = text[-size:]
        lines = "\n" in unit
        if FENCE in unit and not any(c.isalnum() for c in unit):
            needed = EMPTY_FENCE_REPEATS
        elif lines:
            needed = max(MIN_LINE_REPEATS, -(-MIN_LINE_SPAN // size))
        else:
            needed = max(MIN_REPEATS, -(-MIN_SPAN // size))
        if not text.endswith(unit * needed) or not _may_loop(unit):
            continue
        times = needed
        while text.endswith(unit * (times + 1)):
            times += 1
        return unit, times
    return None


def _may_loop(unit: str) -> bool:
    return FENCE in unit or any(c.isalpha() for c in unit)


def cut_looping_call(text: str) -> str | None:
    """``text``, a call being written, cut after the first copy of the loop it ends in (None
    if it does not). A call's arguments can loop too: a note's tags went "Landlord",
    "Landlord", … until the token limit (154 s on 2 cores, fresh phrasings, third set). When
    the loop spans several values (its unit holds a quote), the fragment of a value it
    ends in is dropped; the parser closes what is still open. A call that ends in one digit
    or blank without end (``RUNAWAY_DIGITS``) is dropped whole (no copy of that is a value): what
    came before its opening tag is kept, calls written before it among that."""
    # Only the tail can hold such a run at its end (any run that long shows in its last
    # MIN_SPAN characters): the call grows by a token at a time and this runs on each.
    if _runs_away(text[-MIN_SPAN:]):
        return text[:max(0, *(text.rfind(tag) for tag in OPEN_TAGS))]
    found = repeated_tail(text)
    if found is None:
        return None
    unit, times = found
    kept = text[:len(text) - len(unit) * (times - 1)]
    if '"' in unit and ends_inside_string(kept):
        kept = kept[:kept.rfind('"')]
    return kept

