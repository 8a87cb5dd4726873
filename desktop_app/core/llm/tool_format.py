"""Tool calls in a local model's own trained format: detect it, parse it, sniff it in a stream.

Instruction-tuned GGUFs carry a chat template that knows how to show tools to the model and
what a call looks like; a model follows the format it was trained on far better than one
described in a prompt (the bundled Qwen2.5-0.5B called no tool in 24 of 24 runs in the
project's JSON-mode prompt, and a tool for every arithmetic question in its own format).

Styles recognised from the template text:

* ``hermes`` (Qwen 2.5/3, Hermes, many fine-tunes): ``<tool_call>{"name", "arguments"}</tool_call>``
* ``mistral``: ``[TOOL_CALLS][{"name", "arguments"}, ...]``
* ``llama3`` (Llama 3.1/3.2): ``<|python_tag|>`` or a bare ``{"name", "parameters"}`` object

Small models drift from their format (a fenced ```json block, a bare object, a missing
closing tag), so the parser accepts those variants too, but a *bare* JSON object counts
as a call only if it names a tool that exists and has an arguments object: a user asking
for ``{"name": "Alice", "age": 30}`` gets that JSON back, not a call to a tool "Alice".
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Literal

from desktop_app.core.llm.json_extract import complete_truncated, extract_json, loads_lenient
from desktop_app.core.llm.types import ToolCall

ToolStyle = Literal["hermes", "mistral", "llama3"]

OPEN_TAGS = ("<tool_call>", "[TOOL_CALLS]", "<|python_tag|>")
#: Languages of a fence that may hold a call (```json, a bare ```).
CALL_FENCE_LANGUAGES = ("", "json", "tool_call", "tool_code")
_HERMES_BLOCK = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|$)", re.DOTALL)
_FENCE = re.compile(r"^```[ \t]*([A-Za-z0-9_+-]*)[ \t]*\r?\n(.*?)(?:\r?\n)?```\s*$", re.DOTALL)
_ARG_KEYS = ("arguments", "parameters", "args")


def detect_tool_style(template: str | None) -> ToolStyle | None:
    """The tool-call format a chat template was trained with, or None (no tool support)."""
    if not template or "tools" not in template:
        return None
    if "<tool_call>" in template:
        return "hermes"
    if "[TOOL_CALLS]" in template:
        return "mistral"
    if "<|python_tag|>" in template or ("ipython" in template and "parameters" in template):
        return "llama3"
    return None


@dataclass
class ParsedReply:
    """A model's text split into the visible content and the tool calls it asked for."""

    content: str
    calls: list[ToolCall] = field(default_factory=list)


def _call_from(obj: Any, known: set[str] | None, *, tagged: bool) -> ToolCall | None:
    """A ``ToolCall`` from one decoded object; ``tagged`` objects came inside a call tag."""
    if not isinstance(obj, dict):
        return None
    if isinstance(obj.get("function"), dict):  # OpenAI wire form {"function": {...}}
        obj = obj["function"]
    name = obj.get("name")
    if not isinstance(name, str) or not name.strip():
        return None
    name = name.strip()
    args: Any = next((obj[k] for k in _ARG_KEYS if k in obj), None)
    if isinstance(args, str):  # double-encoded arguments
        try:
            args = loads_lenient(args)
        except ValueError:
            pass
    if not tagged:
        # Bare JSON is a call only when it unmistakably is one.
        if known is None or name not in known or not isinstance(args, dict):
            return None
        extra = set(obj) - {"name", *_ARG_KEYS, "type", "id"}
        if extra:
            return None
    if args is None:
        args = {}
    text = args if isinstance(args, str) else json.dumps(args, ensure_ascii=False)
    return ToolCall(id="", name=name, arguments=text)


def _decode_many(text: str) -> list[Any]:
    """Objects in ``text``: a JSON array's items, one object, or nothing."""
    stripped = text.strip()
    if not stripped:
        return []
    try:
        value = loads_lenient(stripped)
    except ValueError:
        value = extract_json(stripped, close_truncated=True)
    if isinstance(value, list):
        return value
    return [value] if value is not None else []


def _bare_json_calls(text: str, known: set[str] | None) -> list[ToolCall] | None:
    """Calls when the whole reply is JSON (optionally fenced) naming known tools."""
    body = text.strip()
    fence = _FENCE.match(body)
    if fence is not None:
        if fence.group(1).lower() not in CALL_FENCE_LANGUAGES:
            return None
        body = fence.group(2).strip()
    if not body.startswith(("{", "[")):
        return None
    try:
        value = loads_lenient(body)
    except ValueError:
        # {"name": ...}\n{"name": ...}: one object a line; or one the token limit cut off.
        value = _json_lines(body) or _closed(body)
        if value is None:
            return None
    items = value if isinstance(value, list) else [value]
    calls = [_call_from(item, known, tagged=False) for item in items]
    if not calls or any(c is None for c in calls):
        return None
    return [c for c in calls if c is not None]


def _closed(body: str) -> Any:
    """``body`` decoded after closing the brackets a cut-off reply left open, or None."""
    closed = complete_truncated(body)
    if closed is None:
        return None
    try:
        return loads_lenient(closed)
    except ValueError:
        return None


def _json_lines(body: str) -> list[Any] | None:
    """Objects written one after another (JSON Lines), or None when the text is not that."""
    decoder = json.JSONDecoder()
    items: list[Any] = []
    index = 0
    while index < len(body):
        try:
            value, end = decoder.raw_decode(body, index)
        except ValueError:
            # A last object cut off by the token limit is dropped; anything else is not JSONL.
            return items or None if body[index:].lstrip().startswith("{") else None
        items.append(value)
        index = end
        while index < len(body) and body[index] in " \t\r\n,":
            index += 1
    return items or None


def _dedupe(calls: list[ToolCall]) -> list[ToolCall]:
    """The same call written twice is one call (small models repeat themselves)."""
    seen: set[tuple[str, str]] = set()
    out = []
    for call in calls:
        key = (call.name, call.arguments)
        if key not in seen:
            seen.add(key)
            out.append(call)
    return out


def parse_tool_reply(text: str, known_tools: set[str] | None = None) -> ParsedReply:
    """Split ``text`` into visible content and tool calls (ids are left empty)."""
    if "<tool_call>" in text:
        calls = []
        for block in _HERMES_BLOCK.findall(text):
            found = [c for c in (_call_from(o, known_tools, tagged=True)
                                 for o in _decode_many(block)) if c is not None]
            calls += found or _unreadable_call(block)
        content = text[:text.index("<tool_call>")].strip()
        if calls:
            return ParsedReply(content=content, calls=_dedupe(calls))
    for tag in ("[TOOL_CALLS]", "<|python_tag|>"):
        if tag in text:
            head, _, tail = text.partition(tag)
            calls = [c for c in (_call_from(o, known_tools, tagged=True)
                                 for o in _decode_many(tail)) if c is not None]
            if calls:
                return ParsedReply(content=head.strip(), calls=_dedupe(calls))
    bare = _bare_json_calls(text, known_tools)
    if bare:
        return ParsedReply(content="", calls=_dedupe(bare))
    return ParsedReply(content=text)


_CALL_KEYS = frozenset({"name", *_ARG_KEYS, "type", "id", "function"})


def call_shaped(text: str) -> bool:
    """True when ``text`` is written like a tool call, to whatever name: a call tag, or
    JSON objects (fenced or not) that have a ``name`` and nothing but call keys. A small
    model asked a plain question sometimes "calls" a tool it made up (``reverse_string``)
    instead of answering; this tells that apart from JSON the user asked for."""
    if any(tag in text for tag in OPEN_TAGS):
        return True
    body = text.strip()
    fence = _FENCE.match(body)
    if fence is not None:
        body = fence.group(2).strip()
    if not body.startswith(("{", "[")):
        return False
    try:
        value = loads_lenient(body)
    except ValueError:
        value = _json_lines(body) or _closed(body)
    items = value if isinstance(value, list) else [value]
    return bool(items) and all(
        isinstance(i, dict) and isinstance(i.get("name"), str) and set(i) <= _CALL_KEYS
        for i in items)


#: Verbs small models use interchangeably in made-up tool names, by what they do.
_VERB_GROUPS = ({"create", "make", "save", "write", "add", "new", "store", "put"},
                {"read", "get", "open", "show", "load", "fetch", "view"},
                {"find", "search", "lookup", "list", "query"},
                {"convert", "conversion"}, {"calculate", "calculator", "compute", "calc"})


def _words(name: str) -> set[str]:
    return {w.rstrip("s") for w in re.split(r"[^a-z0-9]+", name.lower()) if w}


def _verb_group(words: set[str]) -> set[int]:
    return {i for i, group in enumerate(_VERB_GROUPS) if words & group}


def closest_tool(name: str, offered: set[str]) -> str | None:
    """The offered tool a made-up name clearly means (``create_note`` → ``note_create``,
    ``create_file`` → ``write_file``, ``get_current_time`` → ``current_time``), or None."""
    import difflib

    if name in offered:
        return name
    words = _words(name)
    verbs = _verb_group(words)
    nouns = words - set().union(*_VERB_GROUPS)
    scored = []
    for tool in offered:
        tool_words = _words(tool)
        shared_nouns = nouns & (tool_words - set().union(*_VERB_GROUPS))
        same_verb = bool(verbs & _verb_group(tool_words))
        if shared_nouns or (same_verb and not nouns):
            scored.append((2 * len(shared_nouns) + int(same_verb), tool))
    scored.sort(reverse=True)
    if scored and (len(scored) == 1 or scored[0][0] > scored[1][0]):
        return scored[0][1]
    match = difflib.get_close_matches(name.lower(), sorted(offered), n=1, cutoff=0.75)
    return match[0] if match else None


def opening_kind(text: str) -> Literal["answer", "call"] | None:
    """How the start of a reply reads: a call's opening (a call tag, a bracket, a fence of
    a call language around one), prose, or None while it is too short to tell. A bracket is
    "call" here and only decided at the end: it may be a bare call or a JSON answer."""
    head = text.lstrip()
    if not head:
        return None
    for tag in OPEN_TAGS:
        if head.startswith(tag):
            return "call"
        if tag.startswith(head):
            return None  # could still become the tag
    if head[0] in "{[":
        return "call"
    if head.startswith("`"):
        if not head.startswith("```"):
            return None if len(head) < 3 else "answer"
        first_line, newline, rest = head.partition("\n")
        if not newline:
            return None
        language = first_line[3:].strip().lower()
        if language not in CALL_FENCE_LANGUAGES:
            return "answer"
        if not rest.strip():
            return None
        return "call" if rest.lstrip()[0] in "{[" else "answer"
    return "answer"


class ToolCallSniffer:
    """Decides, as text streams in, whether it is an answer (show it now) or a tool call.

    ``feed`` returns the text that is safe to show. While the start of the reply could
    still become a call (whitespace, a partial ``<tool_call>``, an opening ``{`` or a
    ```json fence) nothing is shown; once it is clearly prose everything flows through,
    except that a call tag appearing later stops the flow (text after it is the call).
    ``finish`` returns the held-back rest when the reply turned out to be prose, and
    ``parse`` the whole reply's content and calls.
    """

    def __init__(self, known_tools: set[str] | None = None) -> None:
        self.known_tools = known_tools
        self.text = ""
        self._shown = 0
        self._decided: Literal["answer", "call"] | None = None

    @property
    def is_call(self) -> bool:
        return self._decided == "call"

    @property
    def shown(self) -> bool:
        """Some of the reply has already been released as answer text."""
        return self._shown > 0

    @property
    def is_answer(self) -> bool:
        return self._decided == "answer"

    def feed(self, delta: str) -> str:
        self.text += delta
        if self._decided is None:
            self._decided = opening_kind(self.text)
            if self._decided is None or self._decided == "call":
                return ""
        if self._decided == "call":
            return ""
        return self._release()

    def _release(self) -> str:
        """Answer text not shown yet, holding back a possible partial call tag at the end."""
        tag_at = min((i for i in (self.text.find(t, self._shown) for t in OPEN_TAGS)
                      if i >= 0), default=-1)
        if tag_at >= 0:
            out = self.text[self._shown:tag_at]
            self._shown = tag_at
            self._decided = "call"  # prose, then a call: the rest is not for the user
            return out
        end = len(self.text) - _partial_tag_suffix(self.text)
        out = self.text[self._shown:end]
        self._shown = max(self._shown, end)
        return out

    def complete(self) -> bool:
        """True once the reply holds a finished call and goes on with something other than
        another call: generation can stop there. (A small model that emitted a call as
        bare JSON tends to repeat it line after line until the token limit.)"""
        if self._decided != "call":
            return False
        text = self.text
        closing = text.rfind("</tool_call>")
        if closing >= 0:
            rest = text[closing + len("</tool_call>"):].lstrip()
            return bool(rest) and not "<tool_call>".startswith(rest[:11]) \
                and not rest.startswith("<tool_call>")
        head = text.lstrip()
        if "<tool_call>" in text or not head.startswith("{"):
            return False
        try:
            _value, end = json.JSONDecoder().raw_decode(head)
        except ValueError:
            return False
        return "\n" in head[end:] and bool(head[end:].strip())

    def finish(self) -> str:
        """At the end of the stream: answer text still held back (a JSON answer included)."""
        if self._decided == "answer":
            out = self.text[self._shown:]
            self._shown = len(self.text)
            return out
        if self._decided is None or not self.parse().calls:
            out = self.text[self._shown:]
            if not self._shown:
                out = out.lstrip()  # nothing shown yet: no leading blank lines
            self._shown = len(self.text)
            self._decided = "answer"
            return out
        return ""

    def parse(self) -> ParsedReply:
        return parse_tool_reply(self.text, self.known_tools)


_NAME_RE = re.compile(r'"name"\s*:\s*"([^"]+)"')


def _unreadable_call(block: str) -> list[ToolCall]:
    """A call whose JSON is broken but whose tool name is readable: passed on with the raw
    text as arguments, so the engine tells the model what was wrong and it can retry."""
    match = _NAME_RE.search(block)
    if match is None:
        return []
    rest = block[match.end():].lstrip(" ,\n")
    raw = rest.split(":", 1)[1].strip() if rest.startswith(tuple(f'"{k}"' for k in _ARG_KEYS)) \
        and ":" in rest else rest
    return [ToolCall(id="", name=match.group(1).strip(), arguments=raw.rstrip("} \n") or "{")]


def _partial_tag_suffix(text: str) -> int:
    """Length of the longest end of ``text`` that begins one of the call tags."""
    best = 0
    for tag in OPEN_TAGS:
        for size in range(min(len(tag) - 1, len(text)), 0, -1):
            if text.endswith(tag[:size]):
                best = max(best, size)
                break
    return best
