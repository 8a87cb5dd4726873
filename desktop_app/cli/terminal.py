"""What the command line writes is stripped of terminal control sequences.

Model names from GGUF metadata, hub repository ids and file names, document passages,
tool results and model answers all come from outside; printed raw, a sequence in them can
write the user's clipboard (OSC 52), retitle or clear the terminal, or hide text. One rule
at the one place output leaves the program: every write to stdout and stderr keeps text,
tabs, newlines and carriage returns, and drops every other control character and escape
sequence — except the erase-line sequence the CLI's own progress lines use.
"""

from __future__ import annotations

import re
from typing import Any, TextIO

#: ESC-introduced sequences (CSI, OSC up to BEL or ST, two-character escapes), then any
#: other C0/C1 control character but tab, newline and carriage return.
_ESCAPES = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"
                      r"|\x1b[P^_X][^\x1b]*(?:\x1b\\)?|\x1b[@-Z\\-_]?|\x9b[0-?]*[ -/]*[@-~]")
_CONTROLS = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
#: The progress line's own "go to column 1 and clear the line".
_ERASE_LINE = "\r\x1b[K"
_PLACEHOLDER = "\ue000"


def terminal_safe(text: str) -> str:
    """``text`` without control sequences (the CLI's own erase-line kept)."""
    if "\x1b" not in text and not _CONTROLS.search(text):
        return text
    kept = text.replace(_ERASE_LINE, _PLACEHOLDER)
    kept = _CONTROLS.sub("", _ESCAPES.sub("", kept))
    return kept.replace(_PLACEHOLDER, _ERASE_LINE)


class SafeStream:
    """A text stream whose writes go through ``terminal_safe``; everything else is the
    wrapped stream's (``buffer``, ``isatty``, ``fileno``…)."""

    def __init__(self, stream: TextIO) -> None:
        self.wrapped = stream

    def write(self, text: str) -> int:
        self.wrapped.write(terminal_safe(text))
        return len(text)

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.wrapped, name)
