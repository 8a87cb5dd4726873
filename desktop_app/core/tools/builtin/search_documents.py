"""``search_documents``: passages from the document collections attached to the chat.

Each passage comes numbered with its place, in a form the window turns into citation links
(``citations.parse_passages``): ``[n] <collection>/<file relative to its folder>, page p``
or ``… › heading``, then the passage. Numbers go on across the calls of one run, and a
passage found twice keeps its number, so "[2]" means one passage throughout an answer.
Paths are shown relative to the folder the user added: a hosted model is not told the
user's home folder layout.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from desktop_app.core.documents import CollectionError, DocumentLibrary, Hit
from desktop_app.core.tools.base import Tool, ToolRegistry, ToolResult

DEFAULT_RESULTS = 4
#: The model sees at most this much of a passage (chunks are ~160 words already).
PASSAGE_CHARS = 1200
CITE_HINT = ("Answer from these passages. After each fact, cite the passage it comes from "
             "as [1], [2] and so on. If they do not answer the question, say so.")


def display_path(hit: Hit, sources: Sequence[str]) -> str:
    """``collection/relative/path`` of a hit (relative to the source folder holding it)."""
    path = Path(hit.path)
    for source in sorted(sources, key=len, reverse=True):
        try:
            relative = path.relative_to(source)
        except ValueError:
            continue
        if str(relative) != ".":
            return f"{hit.collection}/{relative.as_posix()}"
    return f"{hit.collection}/{path.name}"


def passage_label(hit: Hit, sources: Sequence[str]) -> str:
    where = display_path(hit, sources)
    if hit.page is not None:
        return f"{where}, page {hit.page}"
    return f"{where} › {hit.heading}" if hit.heading else where


class SearchDocumentsTool(Tool):
    name = "search_documents"
    description = "Search the user's documents attached to this chat for passages"
    parameters: Mapping[str, Any] = {
        "type": "object",
        "properties": {"query": {"type": "string",
                                 "description": "What to look for, in the user's words"}},
        "required": ["query"],
        "additionalProperties": False,
    }
    read_only = True

    def __init__(self, library: DocumentLibrary, collections: Sequence[str], *,
                 results: int = DEFAULT_RESULTS) -> None:
        self._library = library
        self._collections = list(collections)
        self._results = results
        self._numbers: dict[int, int] = {}  # chunk id -> citation number in this run
        if self._collections:
            self.description += f" ({', '.join(self._collections)})"

    async def run(self, args: dict[str, Any]) -> ToolResult:
        query = str(args["query"]).strip()
        if not query:
            return ToolResult.failure("The query is empty.")
        try:
            hits = await asyncio.to_thread(self._library.search, query,
                                           collections=self._collections, limit=self._results)
            sources = {c.name: c.sources for c in self._library.collections()}
        except CollectionError as exc:
            return ToolResult.failure(f"{exc} Attach another collection to the chat.")
        if not hits:
            return ToolResult(text=f"No passage in {', '.join(self._collections)} matches "
                                   f"'{query}'.")
        blocks = []
        for hit in hits:
            number = self._numbers.setdefault(hit.chunk_id, len(self._numbers) + 1)
            text = " ".join(hit.text.split())
            if len(text) > PASSAGE_CHARS:
                text = text[:PASSAGE_CHARS].rsplit(" ", 1)[0] + " …"
            label = passage_label(hit, sources.get(hit.collection, []))
            blocks.append(f"[{number}] {label}\n{text}")
        return ToolResult(text="\n\n".join(blocks) + f"\n\n{CITE_HINT}")


def with_documents(tools: Iterable[Tool], library: DocumentLibrary,
                   collections: Sequence[str]) -> ToolRegistry:
    """``tools`` plus ``search_documents`` over those of ``collections`` that still exist
    (a collection removed since it was attached is skipped, not an error)."""
    known = {c.name.casefold(): c.name for c in library.collections()}
    names = [known[n.casefold()] for n in collections if n.casefold() in known]
    registry = ToolRegistry([tool for tool in tools if tool.name != SearchDocumentsTool.name])
    if names:
        registry.register(SearchDocumentsTool(library, names))
    return registry
