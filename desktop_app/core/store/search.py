"""Full-text search over every message (FTS5, bm25-ranked, with snippets).

What a person types is never passed to FTS5 as query syntax: ``C++ "foo`` or ``AND OR (``
would raise a syntax error (or silently mean something else). Each whitespace-separated
term becomes a quoted phrase, so punctuation, quotes and operator words are searched
literally, and all terms must occur (implicit AND). The last term also matches as a prefix
so results appear while the user is still typing.
"""

from __future__ import annotations

import sqlite3
import unicodedata

from desktop_app.core.errors import StorageError
from desktop_app.core.store.records import SearchHit

#: Tokens around a match in a snippet.
SNIPPET_TOKENS = 12
#: Ranking is done over at most this many of the newest matching messages. bm25 has to score
#: every candidate before the best 50 are known; for a word in nearly every message ("the"
#: in 100,000 messages) that measured 0.5-0.9 s, with the window it is under 0.1 s. Rarer
#: words (fewer matches than the window) are ranked over all their matches, as before.
RANK_WINDOW = 5000


def build_match_query(text: str, *, prefix_last: bool = True) -> str | None:
    """The FTS5 MATCH expression for ``text``; None when there is nothing to search for."""
    # Control characters (a NUL ends an FTS5 string early) separate terms like spaces.
    text = "".join(" " if unicodedata.category(ch) == "Cc" else ch for ch in text)
    terms = [t for t in text.split() if any(ch.isalnum() for ch in t)]
    if not terms:
        return None
    quoted = ['"' + term.replace('"', '""') + '"' for term in terms]
    if prefix_last:
        quoted[-1] += "*"
    return " ".join(quoted)


def search_messages(conn: sqlite3.Connection, text: str, *, limit: int = 50,
                    conversation_id: str | None = None, include_archived: bool = True,
                    highlight: tuple[str, str] = ("**", "**"),
                    prefix_last: bool = True) -> list[SearchHit]:
    """Best matches first. Conversations in the trash are never searched."""
    match = build_match_query(text, prefix_last=prefix_last)
    if match is None or limit <= 0:
        return []
    where = ["messages_fts MATCH ?", "c.deleted_at IS NULL"]
    params: list[object] = [highlight[0], highlight[1], match]
    if conversation_id is not None:
        where.append("m.conversation_id = ?")
        params.append(conversation_id)
    if not include_archived:
        where.append("c.archived = 0")
    if conversation_id is None:
        cutoff = _window_start(conn, match)
        if cutoff is not None:
            where.append("messages_fts.rowid >= ?")
            params.append(cutoff)
    params.append(limit)
    # ORDER BY rank lets FTS5 sort by bm25 itself and stop after LIMIT rows, so snippet()
    # is only computed for the rows returned.
    sql = f"""
        SELECT m.conversation_id, c.title, m.id, m.role,
               snippet(messages_fts, 0, ?, ?, '…', {SNIPPET_TOKENS}), messages_fts.rank,
               m.created_at
        FROM messages_fts
        JOIN messages m ON m.id = messages_fts.rowid
        JOIN conversations c ON c.id = m.conversation_id
        WHERE {' AND '.join(where)}
        ORDER BY messages_fts.rank
        LIMIT ?"""
    try:
        rows = conn.execute(sql, params).fetchall()
    except sqlite3.OperationalError as exc:  # quoting makes this unreachable for text input
        raise StorageError(f"Searching for {text!r} failed: {exc}",
                           hint="Try different words.") from exc
    return [SearchHit(conversation_id=r[0], conversation_title=r[1], message_id=r[2], role=r[3],
                      snippet=r[4], rank=r[5], created_at=r[6]) for r in rows]


def _window_start(conn: sqlite3.Connection, match: str) -> int | None:
    """The rowid of the RANK_WINDOW-th newest match, or None if there are fewer matches."""
    try:
        row = conn.execute("SELECT rowid FROM messages_fts WHERE messages_fts MATCH ? "
                           "ORDER BY rowid DESC LIMIT 1 OFFSET ?",
                           (match, RANK_WINDOW - 1)).fetchone()
    except sqlite3.OperationalError:
        return None  # the main query reports the problem
    return int(row[0]) if row else None
