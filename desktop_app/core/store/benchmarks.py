"""Model speed measurements in the store: one row per (model file, machine) run.

A mixin of ``ConversationStore`` like ``EvalsMixin``; it takes plain values so the store
stays below the catalogue in the import graph.
"""

from __future__ import annotations

import json
import sqlite3
import time
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any

from desktop_app import __version__
from desktop_app.core.store.evals import machine_label


@dataclass(frozen=True)
class StoredBenchmark:
    model_key: str
    model_name: str
    machine: str
    created_at: float
    results: dict[str, Any]


class BenchmarksMixin:
    """Model benchmarks (needs ``conn`` and ``transaction()``)."""

    conn: sqlite3.Connection

    def transaction(self) -> AbstractContextManager[sqlite3.Connection]:
        raise NotImplementedError

    def save_benchmark(self, *, model_key: str, model_name: str,
                       results: dict[str, Any]) -> StoredBenchmark:
        created = time.time()
        with self.transaction() as conn:
            conn.execute(
                "INSERT INTO model_benchmarks (created_at, model_key, model_name, machine, "
                "app_version, results) VALUES (?, ?, ?, ?, ?, ?)",
                (created, model_key, model_name, machine_label(), __version__,
                 json.dumps(results)))
        return StoredBenchmark(model_key, model_name, machine_label(), created, results)

    def latest_benchmarks(self) -> dict[str, StoredBenchmark]:
        """The newest measurement of each model file on this machine, by model key."""
        rows = self.conn.execute(
            "SELECT model_key, model_name, machine, created_at, results FROM model_benchmarks "
            "WHERE machine = ? ORDER BY created_at, id", (machine_label(),)).fetchall()
        return {r[0]: StoredBenchmark(r[0], r[1], r[2], r[3], json.loads(r[4])) for r in rows}
