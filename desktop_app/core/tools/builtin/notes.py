"""Notes the assistant keeps for the user: create, list/search and read.

Storage choice: one **plain Markdown file per note** under ``paths.data_dir()/notes``, not
SQLite. Notes are the user's own writing; as files they can be opened, edited, backed up
and synced with any editor, they survive the app, and there is no schema to migrate. A
personal notes folder holds hundreds to a few thousand notes, which a scan searches in
milliseconds, so an index would buy nothing. Each file starts with a tiny header::

    ---
    title: Shopping list
    created: 2026-12-02T10:15:00+00:00
    tags: home, weekly
    ---
    body...

Files a user writes by hand without the header still work (title = first line/heading).
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from desktop_app.core import paths
from desktop_app.core.errors import ToolArgumentError, ToolError
from desktop_app.core.tools.base import Tool, ToolResult, quoted

MAX_NOTE_CHARS = 200_000
MAX_LISTED = 50


def notes_dir() -> Path:
    """The folder holding the note files (created on first use)."""
    folder = paths.data_dir() / "notes"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@dataclass
class Note:
    """One note file, parsed."""

    id: str
    title: str
    body: str
    created: str = ""
    tags: list[str] = field(default_factory=list)

    def render(self) -> str:
        tags = f"tags: {', '.join(self.tags)}\n" if self.tags else ""
        return f"---\ntitle: {self.title}\ncreated: {self.created}\n{tags}---\n{self.body}\n"


def _slug(title: str) -> str:
    slug = re.sub(r"[^\w]+", "-", title.lower(), flags=re.UNICODE).strip("-_")
    return slug[:60] or "note"


def parse_note(note_id: str, text: str) -> Note:
    """Parse a note file's text (with or without the header)."""
    meta: dict[str, str] = {}
    body = text
    if text.startswith("---\n"):
        end = text.find("\n---\n", 4)
        if end != -1:
            for line in text[4:end].splitlines():
                key, _, value = line.partition(":")
                meta[key.strip().lower()] = value.strip()
            body = text[end + 5:]
    body = body.rstrip("\n")
    title = meta.get("title") or next(
        (ln.lstrip("# ").strip() for ln in body.splitlines() if ln.strip()), note_id)
    tags = [t.strip() for t in meta.get("tags", "").split(",") if t.strip()]
    return Note(id=note_id, title=title, body=body, created=meta.get("created", ""), tags=tags)


class NoteStore:
    """Notes as Markdown files in one folder; ids are the file names without ``.md``."""

    def __init__(self, folder: Path | None = None) -> None:
        self.folder = folder or notes_dir()
        self.folder.mkdir(parents=True, exist_ok=True)

    def _path(self, note_id: str) -> Path:
        if not re.fullmatch(r"[\w-]{1,80}", note_id, flags=re.UNICODE):
            raise ToolArgumentError(f"'{note_id}' is not a note id.",
                                    hint="Use an id from notes_find, like 'shopping-list'.")
        return self.folder / f"{note_id}.md"

    def create(self, title: str, body: str, tags: list[str] | None = None) -> Note:
        title = " ".join(title.split())
        if not title:
            raise ToolArgumentError("A note needs a title.")
        if len(body) > MAX_NOTE_CHARS:
            raise ToolArgumentError(f"The note has {len(body):,} characters; the limit is "
                                    f"{MAX_NOTE_CHARS:,}.", hint="Split it into several notes.")
        base = _slug(title)
        created = datetime.now(UTC).isoformat(timespec="seconds")
        note = Note(id=base, title=title, body=body, created=created,
                    tags=[" ".join(t.replace(",", " ").split()) for t in tags or [] if t.strip()])
        for n in range(1, 1000):
            note.id = base if n == 1 else f"{base}-{n}"
            try:
                # "x" never overwrites: two notes with one title get distinct ids.
                with open(self._path(note.id), "x", encoding="utf-8") as handle:
                    handle.write(note.render())
                return note
            except FileExistsError:
                continue
        raise ToolError(f"Too many notes titled '{title}'.", hint="Pick a different title.")

    def read(self, note_id: str) -> Note:
        path = self._path(note_id)
        if not path.is_file():
            raise ToolError(f"There is no note '{note_id}'.",
                            hint="Call notes_find to see the existing note ids.")
        return parse_note(note_id, path.read_text(encoding="utf-8", errors="replace"))

    def all(self) -> list[Note]:
        """Every note, newest file first."""
        files = sorted(self.folder.glob("*.md"), key=lambda p: p.stat().st_mtime, reverse=True)
        return [parse_note(p.stem, p.read_text(encoding="utf-8", errors="replace")) for p in files]

    def search(self, query: str) -> list[Note]:
        """Notes with every word of ``query`` (title, tags or body; case-insensitive, plural
        or singular); when no note has them all, the notes that have the most of them.

        People (and models) ask "which books are on my book list?", not "book list": the
        question's small words are dropped and a near miss beats "no notes match".
        """
        words = search_words(query)
        if not words:
            return self.all()
        scored: list[tuple[int, Note]] = []
        for note in self.all():
            score = _matched_words(note, words)
            if score:
                scored.append((score, note))
        best = max((score for score, _ in scored), default=0)
        if best == len(words):
            return [note for score, note in scored if score == best]
        return [note for _, note in sorted(scored, key=lambda pair: -pair[0])]


#: Words that say nothing about which note is meant.
_STOP_WORDS = frozenset("""
a an the and or of in on at to for from with by is are was were be been it its this that
these those what which who whom where when how why do does did i me my mine you your we our
please can could would should will shall check look find search tell show give list note
notes there here about any some all get got have has had
""".split())  # noqa: SIM905 (a word list reads better as text)


def search_words(query: str) -> list[str]:
    """The words of ``query`` worth matching: lower case, no punctuation, no small words."""
    words = re.findall(r"[\w'-]+", query.lower())
    return list(dict.fromkeys(w.strip("'-") for w in words
                              if w.strip("'-") and w.strip("'-") not in _STOP_WORDS))


def _matched_words(note: Note, words: list[str]) -> int:
    haystack = f"{note.title}\n{' '.join(note.tags)}\n{note.body}".lower()
    return sum(1 for word in words if _stem(word) in haystack)


def _stem(word: str) -> str:
    """'books' → 'book', 'boxes' → 'box', 'glass' stays: enough to match plural to singular."""
    if len(word) > 4 and word.endswith(("ches", "shes", "xes", "sses")):
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


#: A note body up to this long is shown whole in search results (no second call needed).
SHOW_WHOLE_BODY = 300


def _line(note: Note, words: list[str] | None = None) -> str:
    """One note in a listing; with the search ``words`` (a search was made), its short body
    or the passage around the first word found."""
    tags = f" [tags: {', '.join(note.tags)}]" if note.tags else ""
    when = f" ({note.created[:10]})" if note.created else ""
    snippet = ""
    body = " ".join(note.body.split())
    if words is not None and len(body) <= SHOW_WHOLE_BODY:
        snippet = f" — {body}" if body else ""
    elif words is not None:
        lower = body.lower()
        positions = [lower.find(_stem(w)) for w in words]
        pos = min((p for p in positions if p >= 0), default=-1)
        if pos >= 0:
            start = max(0, pos - 40)
            snippet = " — …" + body[start: pos + 120] + "…"
    return f"- {note.id}: {note.title}{when}{tags}{snippet}"


class NoteCreateTool(Tool):
    name = "note_create"
    description = "Save a new note (title, Markdown text, optional tags)"
    read_only = False  # it adds a file to the user's notes, so the user confirms it
    parameters: Mapping[str, Any] = {
        "type": "object",
        "properties": {
            "title": {"type": "string", "minLength": 1},
            "text": {"type": "string", "description": "The note body (Markdown)."},
            "tags": {"type": "array", "items": {"type": "string"}},
        },
        "required": ["title", "text"],
        "additionalProperties": False,
    }

    def __init__(self, store: NoteStore | None = None) -> None:
        self._store = store

    async def run(self, args: dict[str, Any]) -> ToolResult:
        store = self._store or NoteStore()
        note = await asyncio.to_thread(store.create, args["title"], args["text"], args.get("tags"))
        return ToolResult(text=f"Saved note '{note.title}' with id '{note.id}'.",
                          confirmation=f"Saved the note “{note.title}”:\n\n"
                                       + quoted(note.body))


class NotesFindTool(Tool):
    name = "notes_find"
    reads_private = True
    description = "List the user's notes, or search them by words"
    parameters: Mapping[str, Any] = {
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": "Words to look for; empty lists all notes."},
        },
        "additionalProperties": False,
    }

    def __init__(self, store: NoteStore | None = None) -> None:
        self._store = store

    async def run(self, args: dict[str, Any]) -> ToolResult:
        store = self._store or NoteStore()
        query = (args.get("query") or "").strip()
        notes = await asyncio.to_thread(store.search if query else lambda _q: store.all(), query)
        if not notes:
            return ToolResult(text=f"No notes match '{query}'." if query
                              else "There are no notes yet.")
        shown = notes[:MAX_LISTED]
        more = f"\n(and {len(notes) - len(shown)} more)" if len(notes) > len(shown) else ""
        words = search_words(query) if query else None
        if words and _matched_words(notes[0], words) < len(words):
            head = f"No note has every word of '{query}'; the closest {len(notes)}:"
        elif query:
            head = f"{len(notes)} note(s) matching '{query}':"
        else:
            head = f"{len(notes)} note(s):"
        return ToolResult(text=head + "\n" + "\n".join(_line(n, words) for n in shown) + more)


class NoteReadTool(Tool):
    name = "note_read"
    reads_private = True
    description = "Read one of the user's notes by id (ids come from notes_find)"
    parameters: Mapping[str, Any] = {
        "type": "object",
        "properties": {"id": {"type": "string", "description": "Note id, e.g. 'shopping-list'."}},
        "required": ["id"],
        "additionalProperties": False,
    }

    def __init__(self, store: NoteStore | None = None) -> None:
        self._store = store

    async def run(self, args: dict[str, Any]) -> ToolResult:
        store = self._store or NoteStore()
        note = await asyncio.to_thread(store.read, args["id"].strip())
        tags = f"Tags: {', '.join(note.tags)}\n" if note.tags else ""
        created = f"Created: {note.created}\n" if note.created else ""
        return ToolResult(text=f"# {note.title}\n{created}{tags}\n{note.body}")


def note_tools(store: NoteStore | None = None) -> list[Tool]:
    """The three notes tools; ``store=None`` uses the app's notes folder at call time."""
    return [NoteCreateTool(store), NotesFindTool(store), NoteReadTool(store)]
