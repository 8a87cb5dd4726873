"""Sections into overlapping passages small enough for the embedding model.

A passage is about 120 words and overlaps the one before by 20, so a sentence cut at a
boundary is whole in one of the two; splits prefer sentence ends. The embedding model reads
at most 256 word pieces: prose of 120 words is ~160, markup-heavy text (reStructuredText,
code) up to twice that, and at 160 words a third of the Python documentation's passages
were cut before their end (measured).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from desktop_app.core.documents.convert import Section

CHUNK_WORDS = 120
OVERLAP_WORDS = 20

_SENTENCE_END = re.compile(r"[.!?:;]$")


@dataclass(frozen=True)
class Chunk:
    ordinal: int
    text: str
    page: int | None
    heading: str


def chunk_sections(sections: list[Section], *, size: int = CHUNK_WORDS,
                   overlap: int = OVERLAP_WORDS) -> list[Chunk]:
    chunks: list[Chunk] = []
    for section in sections:
        for text in _split(section.text, size, overlap):
            chunks.append(Chunk(ordinal=len(chunks), text=text, page=section.page,
                                heading=section.heading))
    return chunks


def _split(text: str, size: int, overlap: int) -> list[str]:
    words = text.split()
    if not words:
        return []
    if len(words) <= size:
        return [" ".join(words)]
    pieces: list[str] = []
    start = 0
    while start < len(words):
        end = min(start + size, len(words))
        if end < len(words):
            # Back off to the last sentence end in the second half of the window.
            for cut in range(end, start + size // 2, -1):
                if _SENTENCE_END.search(words[cut - 1]):
                    end = cut
                    break
        pieces.append(" ".join(words[start:end]))
        if end >= len(words):
            break
        start = max(end - overlap, start + 1)
    return pieces


def embedding_text(chunk_text: str, heading: str, file_name: str) -> str:
    """What is embedded: the passage with the file name and heading it sits under, which
    carry much of its meaning ("Installation" above "run make")."""
    context = " › ".join(part for part in (file_name, heading) if part)
    return f"{context}\n{chunk_text}" if context else chunk_text
