"""Evaluation runs in the store: one row per (model, suite, mode) run, one per task result.

A mixin of ``ConversationStore`` like ``ItemsMixin``. It takes plain values, not the
evaluation package's classes, so the store stays below the engine in the import graph.
"""

from __future__ import annotations

import json
import platform
import sqlite3
import time
from collections.abc import Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any

from desktop_app import __version__

#: Keys of one task result as ``save_eval_run`` takes it.
RESULT_KEYS = ("task_id", "category", "passed", "reason", "tools", "iterations", "seconds",
               "prompt_tokens", "completion_tokens", "first_token", "answer")


def machine_label() -> str:
    """Which machine produced a run (speeds differ): OS, CPU architecture, core count."""
    import os

    return f"{platform.system()} {platform.machine()}, {os.cpu_count() or '?'} cores"


@dataclass(slots=True)
class EvalRun:
    """One stored evaluation run."""

    id: int
    created_at: float
    model: str
    mode: str
    suite: str
    app_version: str
    machine: str
    passed: int
    total: int
    summary: dict[str, Any]
    options: dict[str, Any] = field(default_factory=dict)

    def model_dump(self, mode: str = "python") -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.__slots__}


class EvalsMixin:
    """Evaluation runs (needs ``conn`` and ``transaction()``)."""

    conn: sqlite3.Connection

    def transaction(self) -> AbstractContextManager[sqlite3.Connection]:
        raise NotImplementedError

    def save_eval_run(self, *, model: str, mode: str, suite: str,
                      results: Sequence[dict[str, Any]], summary: dict[str, Any],
                      options: dict[str, Any] | None = None) -> EvalRun:
        """Store a run and every task result in one transaction."""
        created = time.time()
        passed = sum(1 for r in results if r["passed"])
        with self.transaction() as conn:
            cur = conn.execute(
                "INSERT INTO eval_runs (created_at, model, mode, suite, app_version, machine, "
                "options, passed, total, summary) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (created, model, mode, suite, __version__, machine_label(),
                 json.dumps(options or {}, default=str), passed, len(results),
                 json.dumps(summary)))
            run_id = int(cur.lastrowid or 0)
            conn.executemany(
                "INSERT INTO eval_results (run_id, task_id, category, passed, reason, tools, "
                "iterations, seconds, prompt_tokens, completion_tokens, first_token, answer) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [(run_id, r["task_id"], r["category"], int(bool(r["passed"])), r["reason"],
                  json.dumps(r["tools"]), r["iterations"], r["seconds"], r["prompt_tokens"],
                  r["completion_tokens"], r["first_token"], r["answer"]) for r in results])
        return EvalRun(id=run_id, created_at=created, model=model, mode=mode, suite=suite,
                       app_version=__version__, machine=machine_label(), passed=passed,
                       total=len(results), summary=summary, options=options or {})

    def list_eval_runs(self, *, model: str | None = None, limit: int = 50) -> list[EvalRun]:
        """The latest runs first (optionally of one model)."""
        sql = ("SELECT id, created_at, model, mode, suite, app_version, machine, passed, "
               "total, summary, options FROM eval_runs")
        params: tuple[Any, ...] = ()
        if model:
            sql += " WHERE model = ?"
            params = (model,)
        sql += " ORDER BY created_at DESC, id DESC LIMIT ?"
        rows = self.conn.execute(sql, (*params, limit)).fetchall()
        return [EvalRun(id=r[0], created_at=r[1], model=r[2], mode=r[3], suite=r[4],
                        app_version=r[5], machine=r[6], passed=r[7], total=r[8],
                        summary=json.loads(r[9]), options=json.loads(r[10])) for r in rows]

    def eval_results(self, run_id: int) -> list[dict[str, Any]]:
        """The task results of one run, in the order they ran."""
        rows = self.conn.execute(
            f"SELECT {', '.join(RESULT_KEYS)} FROM eval_results WHERE run_id = ? "
            "ORDER BY rowid", (run_id,)).fetchall()
        out = []
        for row in rows:
            item = dict(zip(RESULT_KEYS, row, strict=True))
            item["passed"] = bool(item["passed"])
            item["tools"] = json.loads(item["tools"])
            out.append(item)
        return out
