"""Degenerate repetition: a small model decoding greedily can fall into a loop and write
the same few tokens until its token limit.

Seen on the bundled 0.5B model: a synthesis that wrote "```markdown " 120 times (31 s
instead of 5). ``RepetitionGuard`` watches a stream and says when to stop; the repeated
copies are dropped, one is kept. What counts as a loop: ``desktop_app.core.llm.loops``.
"""

from __future__ import annotations

from desktop_app.core.llm.loops import FENCE, repeated_tail

__all__ = ["RepetitionGuard", "repeated_tail"]


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
