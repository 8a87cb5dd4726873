"""Degenerate repetition: a small model decoding greedily can fall into a loop and write
the same few tokens until its token limit.

Seen on the bundled 0.5B model: a synthesis that wrote "```markdown " 120 times (31 s
instead of 5). ``RepetitionGuard`` watches a stream and says when to stop; the repeated
copies are dropped, one is kept.
"""

from __future__ import annotations

#: A loop is the same piece of text with a letter in it, at least ``MIN_UNIT`` characters
#: long, at least ``MIN_REPEATS`` times in a row and ``MIN_SPAN`` characters in all. Units
#: without a letter are left alone: rules ("-----"), table separators ("| --- | --- |")
#: and digits repeat legitimately, and so do lines: a song's chorus, a checklist. Text
#: inside a code block is never taken for a loop (code repeats itself); a unit holding a
#: line break needs ``MIN_LINE_REPEATS`` copies; a real degenerate loop repeats far more
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


class RepetitionGuard:
    """Feed it the deltas of one stream; ``feed`` returns the text to show, and
    ``tripped`` turns True once the stream has started to loop (stop it then)."""

    def __init__(self, *, enabled: bool = True) -> None:
        self.text = ""
        #: Everything ``feed`` passed on: what the user saw.
        self.shown = ""
        self.tripped = False
        self.enabled = enabled

    def feed(self, delta: str) -> str:
        """The part of ``delta`` to pass on: all of it, or only up to the first copy of a
        loop that has just been found."""
        if self.tripped:
            return ""
        self.text += delta
        if not self.enabled:
            self.shown += delta  # off: a hosted model
            return delta
        found = repeated_tail(self.text)
        in_code = self.text.count(FENCE) % 2 == 1
        if found is None or (in_code and FENCE not in found[0]):
            self.shown += delta  # no loop, or one inside a code block: the program's own
            return delta
        unit, times = found
        self.tripped = True
        # Everything up to and including the first copy was (or is now) passed on.
        keep = len(self.text) - len(unit) * (times - 1)
        already = len(self.text) - len(delta)
        self.text = self.text[:keep]
        passed = self.text[already:] if keep > already else ""
        self.shown += passed
        return passed
