"""File tools confined to the user's workspace folder: list, read, write, search.

All paths go through ``Workspace.resolve`` (``core/tools/sandbox.py``), so ``..``, absolute
paths and symlinks leading outside are refused with ``SandboxViolationError``. Only
``write_file`` changes anything, so only it needs the user's confirmation.
"""

from __future__ import annotations

import asyncio
import fnmatch
import re
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

from desktop_app.core.errors import ToolArgumentError, ToolError
from desktop_app.core.tools.base import Change, Tool, ToolResult, fenced
from desktop_app.core.tools.builtin.text_facts import file_facts
from desktop_app.core.tools.sandbox import Workspace

#: Characters of file text returned to the model per read (the rest is reachable by offset).
DEFAULT_READ_CHARS = 20_000
MAX_LIST_ENTRIES = 500
MAX_SEARCH_HITS = 50
#: Files a request names that are read for it before the model's first turn (local models).
MAX_NAMED_FILES = 2
#: Files larger than this are skipped by content search (they are rarely what one wants).
MAX_SEARCH_FILE_BYTES = 1_000_000
#: A plain listing of at most this many entries shows the start of each text file, so
#: "which file mentions the invoice?" does not need a read per file.
MAX_PREVIEW_ENTRIES = 40
PREVIEW_CHARS = 90


def _size(n: int) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024  # type: ignore[assignment]
    return f"{n} B"


def _lines(text: str) -> str:
    count = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
    return "1 line" if count == 1 else f"{count} lines"


#: What the file tools tell the model about the user's files.
WORKSPACE_HINT = ("Files the user mentions are in their workspace folder: list or read them "
                  "with the file tools before answering about them.")


class _WorkspaceTool(Tool):
    """Base for tools bound to one workspace; blocking file work runs off the event loop."""

    reads_private = True  # names and contents of the user's files

    def __init__(self, workspace: Workspace) -> None:
        self.workspace = workspace


class ListFilesTool(_WorkspaceTool):
    name = "list_files"
    description = "List files and folders in the workspace (optionally recursive)"
    parameters: Mapping[str, Any] = {
        "type": "object",
        "properties": {
            "path": {"type": "string", "default": ".",
                     "description": "Folder relative to the workspace; '.' is the top."},
            "recursive": {"type": "boolean", "default": False},
        },
        "additionalProperties": False,
    }

    async def run(self, args: dict[str, Any]) -> ToolResult:
        return await asyncio.to_thread(self._list, args.get("path", "."),
                                       bool(args.get("recursive")))

    def _list(self, path: str, recursive: bool) -> ToolResult:
        base = self.workspace.resolve(path)
        if not base.is_dir():
            return ToolResult.failure(f"'{path}' is a file, not a folder; use read_file for it.")
        entries = (self.workspace.walk(path) if recursive
                   else (p for p in sorted(base.iterdir())
                         if not (p.is_symlink() and not self.workspace.is_inside(p))))
        lines: list[str] = []
        for entry in entries:
            if len(lines) >= MAX_LIST_ENTRIES:
                lines.append(f"... (stopped after {MAX_LIST_ENTRIES} entries)")
                break
            rel = entry.relative_to(self.workspace.root).as_posix()
            if entry.is_dir():
                lines.append(f"{rel}/")
            else:
                stat = entry.stat()
                when = datetime.fromtimestamp(stat.st_mtime).strftime("%Y-%m-%d %H:%M")
                line = f"{rel}  ({_size(stat.st_size)}, modified {when})"
                if not recursive and len(lines) < MAX_PREVIEW_ENTRIES:
                    line += self._preview(rel)
                lines.append(line)
        shown = self.workspace.relative(base)
        return ToolResult(text=f"Contents of '{shown}':\n" + "\n".join(lines) if lines
                          else f"The folder '{shown}' is empty.")

    def _preview(self, rel: str) -> str:
        """' — first words…' of a text file; '' for binary or unreadable files."""
        try:
            data, more = self.workspace.read_bytes(rel, max_bytes=PREVIEW_CHARS * 2)
        except (OSError, ToolError):
            return ""
        if not data or b"\x00" in data:
            return ""
        text = " ".join(data.decode("utf-8", errors="ignore").split())[:PREVIEW_CHARS]
        return f" — {text}{'…' if more or len(text) == PREVIEW_CHARS else ''}"


class ReadFileTool(_WorkspaceTool):
    name = "read_file"
    # Without it the bundled model answered questions about "expenses.csv" with an SQL query
    # instead of reading the file.
    prompt_hint = WORKSPACE_HINT
    description = "Read a text file in the workspace (from an offset, limited length)"
    parameters: Mapping[str, Any] = {
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "File path relative to the workspace."},
            "offset": {"type": "integer", "minimum": 0, "default": 0,
                       "description": "Character to start at (to continue a long file)."},
            "max_chars": {"type": "integer", "minimum": 1, "maximum": 100_000,
                          "default": DEFAULT_READ_CHARS},
        },
        "required": ["path"],
        "additionalProperties": False,
    }

    async def named_in(self, text: str) -> list[dict[str, Any]]:
        return [{"path": path} for path in await asyncio.to_thread(self._named, text)]

    def _named(self, text: str) -> list[str]:
        """Workspace files whose name (or path) ``text`` holds as a whole word, at most
        ``MAX_NAMED_FILES``. Names without an extension ("notes") are left alone: they are
        ordinary words more often than file names."""
        found: list[str] = []
        folded = text.casefold()
        for count, entry in enumerate(self.workspace.walk()):
            if count >= MAX_LIST_ENTRIES or len(found) >= MAX_NAMED_FILES:
                break
            if "." not in entry.name.strip(".") or not entry.is_file():
                continue
            rel = entry.relative_to(self.workspace.root).as_posix()
            for name in {rel, entry.name}:
                if re.search(rf"(?<![\w./-]){re.escape(name.casefold())}(?![\w/-])", folded):
                    found.append(rel)
                    break
        return found

    async def run(self, args: dict[str, Any]) -> ToolResult:
        if await asyncio.to_thread(lambda: self.workspace.resolve(args["path"]).is_dir()):
            # Small models read '.' to look around; the listing is what they wanted.
            listing = await ListFilesTool(self.workspace).run({"path": args["path"]})
            if not listing.ok:
                return listing
            return ToolResult(text=f"'{args['path']}' is a folder, not a file. {listing.text}")
        text, cut = await asyncio.to_thread(self.workspace.read_text, args["path"])
        offset = int(args.get("offset", 0))
        limit = int(args.get("max_chars", DEFAULT_READ_CHARS))
        if offset and offset >= len(text):
            return ToolResult.failure(f"Offset {offset} is past the end of '{args['path']}' "
                                      f"({len(text)} characters).")
        part = text[offset: offset + limit]
        end = offset + len(part)
        note = ""
        if end < len(text) or cut:
            note = (f"\n\n[Showing characters {offset}–{end} of "
                    f"{'more than ' if cut else ''}{len(text)}; call read_file with "
                    f"offset={end} for more.]")
        elif not offset:
            note = file_facts(args["path"], text)
        return ToolResult(text=part + note)


class WriteFileTool(_WorkspaceTool):
    name = "write_file"
    reads_private = False  # it reports what it wrote, which the model gave it
    description = "Write or append text to a workspace file (asks the user first)"
    read_only = False
    parameters: Mapping[str, Any] = {
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "File path relative to the workspace."},
            "content": {"type": "string"},
            "append": {"type": "boolean", "default": False,
                       "description": "Add to the end instead of replacing the file."},
        },
        "required": ["path", "content"],
        "additionalProperties": False,
    }

    async def describe_change(self, args: dict[str, Any]) -> Change | None:
        return await asyncio.to_thread(self._change, str(args["path"]), str(args["content"]),
                                       bool(args.get("append")))

    def _change(self, path: str, content: str, append: bool) -> Change:
        adding = f"{len(content):,} characters ({_lines(content)})"
        try:
            target = self.workspace.resolve(path, must_exist=False)
        except ToolError as exc:
            return Change(summary=f"Write '{path}' — refused: {exc}")
        if not target.is_file():
            return Change(summary=f"Create '{path}' in your workspace with {adding}.")
        if append:
            return Change(summary=f"Add {adding} to the end of '{path}'.")
        size = target.stat().st_size
        return Change(summary=(f"Replace '{path}' ({_size(size)}) with {adding}. Its current "
                               "content will be lost."), destroys=True)

    async def run(self, args: dict[str, Any]) -> ToolResult:
        append = bool(args.get("append"))
        kept = await asyncio.to_thread(self._write, str(args["path"]), str(args["content"]),
                                       append)
        verb = "Appended" if append else "Wrote"
        shown = self.workspace.relative(self.workspace.resolve(str(args["path"])))
        note = (" The previous version is kept; the person can restore it from this call."
                if kept else "")
        return ToolResult(text=f"{verb} {len(args['content'])} characters to '{shown}'.{note}",
                          confirmation=(f"{'Added to' if append else 'Wrote'} `{shown}` in your "
                                        f"workspace:\n\n" + fenced(args["content"])))

    def _write(self, path: str, content: str, append: bool) -> bool:
        """Write; a file replaced keeps its previous version (``previous_versions``)."""
        from desktop_app.core.tools import previous_versions

        kept = False
        if not append and self.workspace.resolve(path, must_exist=False).is_file():
            kept = previous_versions.keep(self.workspace, path)
        self.workspace.write_text(path, content, append=append)
        return kept


class SearchFilesTool(_WorkspaceTool):
    name = "search_files"
    description = "Find workspace files by name glob ('*.md') and/or text inside"
    parameters: Mapping[str, Any] = {
        "type": "object",
        "properties": {
            "name": {"type": "string", "description": "Glob on the file name, e.g. '*.txt'."},
            "content": {"type": "string", "description": "Text to look for (case-insensitive)."},
            "path": {"type": "string", "default": ".", "description": "Folder to search in."},
        },
        "additionalProperties": False,
    }

    async def run(self, args: dict[str, Any]) -> ToolResult:
        name, content = args.get("name"), args.get("content")
        if not name and not content:
            raise ToolArgumentError("search_files needs 'name' (a glob like '*.md') or "
                                    "'content' (text to find), or both.")
        return await asyncio.to_thread(self._search, args.get("path", "."), name, content)

    def _search(self, path: str, name: str | None, content: str | None) -> ToolResult:
        pattern = re.compile(re.escape(content), re.IGNORECASE) if content else None
        hits: list[str] = []
        for entry in self.workspace.walk(path):
            if len(hits) >= MAX_SEARCH_HITS:
                hits.append(f"... (stopped after {MAX_SEARCH_HITS} matches)")
                break
            if not entry.is_file() or any(part.startswith(".") for part in
                                          entry.relative_to(self.workspace.root).parts[:-1]):
                continue
            rel = entry.relative_to(self.workspace.root).as_posix()
            if name and not fnmatch.fnmatch(entry.name.lower(), name.lower()):
                continue
            if pattern is None:
                hits.append(rel)
                continue
            line = self._first_match(self.workspace, entry, pattern)
            if line is not None:
                hits.append(f"{rel}: {line}")
        what = " and ".join(filter(None, [f"name '{name}'" if name else "",
                                          f"text '{content}'" if content else ""]))
        if not hits:
            return ToolResult(text=f"No files match {what}.")
        return ToolResult(text=f"Files matching {what}:\n" + "\n".join(hits))

    @staticmethod
    def _first_match(workspace: Workspace, path: Path, pattern: re.Pattern[str]) -> str | None:
        try:
            if not path.is_file() or path.stat().st_size > MAX_SEARCH_FILE_BYTES:
                return None  # never open a FIFO or device: reading it could block forever
            data, _ = workspace.read_bytes(workspace.relative(path),
                                           max_bytes=MAX_SEARCH_FILE_BYTES)
        except (OSError, ToolError):
            return None
        if b"\x00" in data[:8192]:
            return None
        for number, line in enumerate(data.decode("utf-8", errors="replace").splitlines(), 1):
            if pattern.search(line):
                snippet = line.strip()
                return f"line {number}: {snippet[:160]}"
        return None


def file_tools(workspace: Workspace) -> list[Tool]:
    """The four workspace file tools bound to ``workspace``."""
    return [ListFilesTool(workspace), ReadFileTool(workspace), WriteFileTool(workspace),
            SearchFilesTool(workspace)]
