"""``extract_json``: find the JSON object in whatever a model wrote (SPEC §3).

Models wrap JSON in Markdown fences, put prose around it, leave literal newlines inside
strings, add trailing commas and write LaTeX with single backslashes. This module tries, in
order: the whole text, every fenced block, every balanced ``{...}`` in the text (the
scanner knows about strings, so braces inside strings do not count), and last an object
the text ends inside of, closed. Each candidate is
decoded leniently; the first one that decodes to a dict wins.

Backslashes are never corrupted: a valid escape stays what it means, an invalid one
(``\\alpha``, ``\\(``) keeps its backslash literally, and ``\\frac``/``\\beta``/``\\theta`` —
which strict JSON would read as form feed, backspace or tab followed by letters — are read
as the LaTeX the model meant.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Iterator
from typing import Any

__all__ = ["extract_json", "iter_balanced_objects", "loads_lenient"]

#: Fenced code blocks: ```json ... ``` or ``` ... ``` (also ~~~), language tag optional.
_FENCE_RE = re.compile(r"(```|~~~)[ \t]*([A-Za-z0-9_+-]*)[ \t]*\r?\n?(.*?)\1", re.DOTALL)
#: Balanced-object scan gives up after this many start positions (keeps huge prose cheap).
_MAX_CANDIDATES = 64

# Escapes strict JSON accepts. ``\b``/``\f`` followed by a letter are LaTeX in practice
# (\frac, \beta, \begin...): nobody means a form feed before "rac".
_VALID_ESCAPES = set('"\\/bfnrtu')
# LaTeX commands that start with a valid JSON escape letter n, t or r. Only these exact
# words are read as LaTeX, because "\nThe next line" must stay a newline.
_LATEX_NTR = frozenset(["nabla", "neq", "ne", "neg", "nu", "ni", "not", "notin", "nolimits", "newline", "newcommand", "noindent", "nearrow", "nwarrow", "natural", "nexists", "nmid", "nparallel", "nsubseteq", "theta", "tau", "times", "text", "textbf", "textit", "textrm", "texttt", "textsf", "tan", "tanh", "to", "top", "triangle", "tilde", "tfrac", "tbinom", "tt", "therefore", "textstyle", "tiny", "rho", "right", "rightarrow", "Rightarrow", "rangle", "rceil", "rfloor", "rm", "rightharpoonup", "rvert", "rVert"])
_WORD_RE = re.compile(r"[A-Za-z]+")


def _fix_escapes(text: str) -> str:
    """Double every backslash that would otherwise be lost or misread, inside strings only."""
    out: list[str] = []
    in_string = False
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if not in_string:
            if ch == '"':
                in_string = True
            out.append(ch)
            i += 1
            continue
        if ch == '"':
            in_string = False
            out.append(ch)
            i += 1
            continue
        if ch != "\\":
            out.append(ch)
            i += 1
            continue
        nxt = text[i + 1] if i + 1 < n else ""
        if nxt == "\\" or nxt == '"' or nxt == "/":
            out.append(text[i:i + 2])
            i += 2
            continue
        if nxt == "u" and re.fullmatch(r"[0-9a-fA-F]{4}", text[i + 2:i + 6] or ""):
            out.append(text[i:i + 6])
            i += 6
            continue
        word_match = _WORD_RE.match(text, i + 1)
        word = word_match.group(0) if word_match else ""
        literal = (
            nxt not in _VALID_ESCAPES
            or nxt == "u"  # \u not followed by 4 hex digits: \underline, \usepackage
            or (nxt in "bf" and len(word) > 1)
            or (nxt in "ntr" and word in _LATEX_NTR)
        )
        out.append("\\\\" if literal else "\\")
        i += 1
    return "".join(out)


_TRAILING_COMMA_RE = re.compile(r",(\s*[}\]])")


def _strip_trailing_commas(text: str) -> str:
    """Remove ``,`` before ``}``/``]`` outside strings."""
    parts: list[str] = []
    in_string = False
    escaped = False
    start = 0
    for i, ch in enumerate(text):
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
                parts.append(text[start:i + 1])
                start = i + 1
        elif ch == '"':
            parts.append(_TRAILING_COMMA_RE.sub(r"\1", text[start:i]))
            start = i
            in_string = True
    tail = text[start:]
    parts.append(tail if in_string else _TRAILING_COMMA_RE.sub(r"\1", tail))
    return "".join(parts)


def loads_lenient(text: str) -> Any:
    """Decode one JSON document: literal newlines in strings allowed, backslashes kept,
    trailing commas dropped. Raises ``ValueError`` if it still is not JSON."""
    # Without a backslash there is nothing to fix (the common case, kept cheap).
    fixed = _fix_escapes(text) if "\\" in text else text
    try:
        # strict=False: control characters (a literal newline) inside strings are fine.
        return json.loads(fixed, strict=False)
    except RecursionError:
        raise ValueError("JSON nested too deeply") from None
    except ValueError as exc:
        first_error = exc
    try:
        return json.loads(_strip_trailing_commas(fixed), strict=False)
    except (ValueError, RecursionError):
        raise ValueError(str(first_error)) from None


def iter_balanced_objects(text: str, limit: int = _MAX_CANDIDATES) -> list[str]:
    """Every top-level balanced ``{...}`` span in ``text`` (string-aware), at most ``limit``.

    An unbalanced ``{`` (e.g. in prose, ``{x``) is skipped and the scan goes on after it.
    """
    found: list[str] = []
    pos = text.find("{")
    while pos != -1 and len(found) < limit:
        end = _balanced_end(text, pos)
        if end is None:
            pos = text.find("{", pos + 1)
            continue
        found.append(text[pos:end + 1])
        pos = text.find("{", end + 1)
    return found


class _OutsideStrings:
    """The characters of ``text[start:]`` outside JSON strings, with their indexes.

    After iterating, ``in_string``/``escaped`` tell whether the text ended inside a string
    (and right after a backslash). Shared by the balanced-object scan and the closing of
    truncated objects, so both agree on what counts as inside a string.
    """

    def __init__(self, text: str, start: int) -> None:
        self.text = text
        self.start = start
        self.in_string = False
        self.escaped = False

    def __iter__(self) -> Iterator[tuple[int, str]]:
        text = self.text
        for i in range(self.start, len(text)):
            ch = text[i]
            if self.in_string:
                if self.escaped:
                    self.escaped = False
                elif ch == "\\":
                    self.escaped = True
                elif ch == '"':
                    self.in_string = False
            elif ch == '"':
                self.in_string = True
            else:
                yield i, ch


def ends_inside_string(text: str) -> bool:
    """The object starting at the first ``{`` is cut off inside one of its strings (read
    as ``complete_truncated`` reads it, which then closes that string)."""
    start = text.find("{")
    if start == -1:
        return False
    scan = _OutsideStrings(text, start)
    for _ in scan:
        pass
    return scan.in_string


def _balanced_end(text: str, start: int) -> int | None:
    depth = 0
    for i, ch in _OutsideStrings(text, start):
        if ch in "{[":
            depth += 1
        elif ch in "}]":
            depth -= 1
            if depth == 0:
                return i if ch == "}" else None
            if depth < 0:
                return None
    return None


def complete_truncated(text: str) -> str | None:
    """The object starting at the first ``{``, closed if the text ends inside it.

    Small models often stop one ``}`` short (or hit the token limit inside a string); closing
    the open strings and brackets in order recovers the object they meant. Returns None when
    nothing is open (the balanced scan already covers that text).
    """
    start = text.find("{")
    if start == -1:
        return None
    stack: list[str] = []
    scan = _OutsideStrings(text, start)
    for _, ch in scan:
        if ch in "{[":
            stack.append("}" if ch == "{" else "]")
        elif ch in "}]":
            if not stack or stack.pop() != ch:
                return None
            if not stack:
                return None  # balanced: not truncated
    if not stack:
        return None
    body = text[start:].rstrip()
    if scan.in_string:
        body += "\\" if scan.escaped else ""
        body += '"'
    return body.rstrip(",") + "".join(reversed(stack))


def _candidates(text: str) -> Iterator[str]:
    """Candidates in order of preference, produced lazily (most texts stop at the first)."""
    yield text.strip()
    if "```" in text or "~~~" in text:
        for match in _FENCE_RE.finditer(text):
            body = match.group(3).strip()
            if body:
                yield body
                yield from iter_balanced_objects(body, limit=8)
    yield from iter_balanced_objects(text)


def extract_json(text: str | None, *, close_truncated: bool = False) -> dict[str, Any] | None:
    """The first JSON object found in ``text``, or None. Never raises.

    ``close_truncated`` also accepts an object the text ends inside of, closed (see
    ``complete_truncated``). Off by default: closing ``{"tools": [`` yields a valid but
    empty list, so only callers that check the result's meaning (the JSON-mode action
    parser) opt in.
    """
    if not text or "{" not in text:
        return None
    seen: set[str] = set()
    candidates: Iterator[str] = _candidates(text)
    if close_truncated:
        completed = complete_truncated(text)
        candidates = itertools.chain(candidates, [completed] if completed else [])
    for candidate in candidates:
        if candidate in seen or not candidate.startswith("{"):
            continue
        seen.add(candidate)
        try:
            value = loads_lenient(candidate)
        except ValueError:
            continue
        if isinstance(value, dict):
            return value
    return None
