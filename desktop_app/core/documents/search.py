"""Ranking passages for a query: words (FTS5 BM25), meaning (vectors), and both fused.

Fusion is weighted reciprocal rank fusion (Cormack et al., 2009): a passage scores the sum
of weight/(k + rank) over the rankings it appears in, so neither ranking's score scale
matters. k = 20 and a word weight of 0.5 were chosen on half of the retrieval benchmark's
questions (benchmarks/retrieval.py; the usual k = 60 with equal weights lost recall@5
0.690 → 0.770 there) and held on the other half (0.690 → 0.770, MRR 0.532 → 0.580).
The vectors of the searched collections are held as one matrix in memory, rebuilt when the
index's generation changes; a query is one matrix-vector product.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from desktop_app.core.documents.index_db import IndexDatabase
from desktop_app.core.documents.indexer import EmbedderLike

Mode = Literal["fused", "words", "vectors"]
RRF_K = 20
#: Weights of the word and the vector ranking in the fusion.
WORD_WEIGHT = 0.5
VECTOR_WEIGHT = 1.0
#: How deep each ranking goes before fusion.
CANDIDATES = 50

# Words that match everywhere and only dilute BM25's OR query.
_STOPWORDS = frozenset("""a an and are as at be by can do does for from how i in is it its me
my of on or should that the this to what when where which who why will
with you your""".split())  # noqa: SIM905 - a word list reads best as text

if TYPE_CHECKING:  # numpy loads with the first index or search, not with the window
    import numpy as np


@dataclass(frozen=True)
class Hit:
    chunk_id: int
    collection: str
    path: str
    page: int | None
    heading: str
    text: str
    score: float

    @property
    def place(self) -> str:
        """"report.pdf, page 3" or "guide.md › Install"."""
        name = Path(self.path).name
        if self.page is not None:
            return f"{name}, page {self.page}"
        return f"{name} › {self.heading}" if self.heading else name


def fts_query(query: str) -> str:
    """An FTS5 OR query of the query's words (quoted: no FTS syntax reaches SQLite)."""
    words = [w for w in re.findall(r"\w+", query.lower()) if w not in _STOPWORDS]
    return " OR ".join(f'"{w}"' for w in dict.fromkeys(words))


def reciprocal_rank_fusion(rankings: Sequence[Sequence[int]],
                           weights: Sequence[float] | None = None, k: int = RRF_K
                           ) -> list[tuple[int, float]]:
    scores: dict[int, float] = {}
    for index, ranking in enumerate(rankings):
        weight = weights[index] if weights is not None else 1.0
        for rank, item in enumerate(ranking, start=1):
            scores[item] = scores.get(item, 0.0) + weight / (k + rank)
    return sorted(scores.items(), key=lambda pair: (-pair[1], pair[0]))


class Searcher:
    def __init__(self, db: IndexDatabase, embedder: EmbedderLike) -> None:
        self._db = db
        self._embedder = embedder
        self._lock = threading.Lock()
        self._matrix: tuple[int, tuple[int, ...], np.ndarray, np.ndarray] | None = None

    def search(self, query: str, *, collections: Sequence[str] | None = None,
               limit: int = 5, mode: Mode = "fused") -> list[Hit]:
        ids = self._collection_ids(collections)
        if not ids or not query.strip():
            return []
        rankings, weights = [], []
        if mode in ("fused", "words"):
            rankings.append(self.word_ranking(query, ids))
            weights.append(WORD_WEIGHT)
        if mode in ("fused", "vectors"):
            rankings.append(self.vector_ranking(query, ids))
            weights.append(VECTOR_WEIGHT)
        fused = reciprocal_rank_fusion(rankings, weights)[:limit]
        return self._hits(fused)

    def _collection_ids(self, names: Sequence[str] | None) -> tuple[int, ...]:
        with self._db.read() as conn:
            rows = conn.execute("SELECT id, name FROM collections ORDER BY id").fetchall()
        if names is None:
            return tuple(r[0] for r in rows)
        wanted = {n.casefold() for n in names}
        return tuple(r[0] for r in rows if r[1].casefold() in wanted)

    def word_ranking(self, query: str, collection_ids: tuple[int, ...]) -> list[int]:
        match = fts_query(query)
        if not match:
            return []
        marks = ",".join("?" * len(collection_ids))
        with self._db.read() as conn:
            rows = conn.execute(
                f"SELECT chunks_fts.rowid FROM chunks_fts "
                f"JOIN chunks c ON c.id = chunks_fts.rowid JOIN files f ON f.id = c.file_id "
                f"WHERE chunks_fts MATCH ? AND f.collection_id IN ({marks}) "
                f"ORDER BY bm25(chunks_fts, 1.0, 0.5) LIMIT ?",
                (match, *collection_ids, CANDIDATES)).fetchall()
        return [r[0] for r in rows]

    def vector_ranking(self, query: str, collection_ids: tuple[int, ...]) -> list[int]:
        import numpy as np

        chunk_ids, matrix = self._vectors(collection_ids)
        if not len(chunk_ids):
            return []
        scores = matrix @ self._embedder.embed([query])[0]
        top = min(CANDIDATES, len(scores))
        best = np.argpartition(-scores, top - 1)[:top]
        best = best[np.argsort(-scores[best], kind="stable")]
        return [int(chunk_ids[i]) for i in best]

    def _vectors(self, collection_ids: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
        import numpy as np

        generation = self._db.generation()
        with self._lock:
            cached = self._matrix
            if cached is not None and cached[0] == generation and cached[1] == collection_ids:
                return cached[2], cached[3]
            marks = ",".join("?" * len(collection_ids))
            with self._db.read() as conn:
                rows = conn.execute(
                    f"SELECT c.id, c.vector FROM chunks c JOIN files f ON f.id = c.file_id "
                    f"WHERE f.collection_id IN ({marks}) ORDER BY c.id",
                    collection_ids).fetchall()
            chunk_ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
            matrix = (np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32)
                      .reshape(len(rows), -1) if rows else np.zeros((0, 1), np.float32))
            self._matrix = (generation, collection_ids, chunk_ids, matrix)
            return chunk_ids, matrix

    def _hits(self, ranked: list[tuple[int, float]]) -> list[Hit]:
        if not ranked:
            return []
        marks = ",".join("?" * len(ranked))
        with self._db.read() as conn:
            rows = conn.execute(
                f"SELECT c.id, col.name, f.path, c.page, c.heading, c.text FROM chunks c "
                f"JOIN files f ON f.id = c.file_id JOIN collections col ON col.id = "
                f"f.collection_id WHERE c.id IN ({marks})",
                [chunk_id for chunk_id, _ in ranked]).fetchall()
        by_id = {r[0]: r for r in rows}
        return [Hit(chunk_id=cid, collection=by_id[cid][1], path=by_id[cid][2],
                    page=by_id[cid][3], heading=by_id[cid][4], text=by_id[cid][5], score=score)
                for cid, score in ranked if cid in by_id]
