"""Should this model plan (DAG mode) at all? Decided from measurements, not model size.

The evidence is the suite's ``dag_goals`` category run both ways on the same model: the
user's own stored evaluation runs first (``desktop-app eval --mode dag`` and a normal run),
else the measurement shipped for the bundled model (``resources/eval/mode_baselines.json``,
from benchmarks/agent_eval.py and ``eval --mode dag`` on these 2-core machines). When DAG
mode solved fewer of those goals than ReAct, or as many but far slower, ReAct is advised.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from desktop_app.core.paths import resources_dir
from desktop_app.core.store.evals import EvalRun

CATEGORY = "dag_goals"
#: "As many, but far slower": DAG mode taking this many times ReAct's time per goal.
SLOWER = 2.0


@dataclass(frozen=True)
class ModeScore:
    passed: int
    total: int
    seconds: float | None = None  # mean per goal

    @property
    def rate(self) -> float:
        return self.passed / self.total if self.total else 0.0


def _score(run: EvalRun) -> ModeScore | None:
    category = (run.summary.get("categories") or {}).get(CATEGORY)
    if not isinstance(category, dict) or not category.get("total"):
        return None
    seconds = category.get("mean_seconds")
    return ModeScore(int(category.get("passed", 0)), int(category["total"]),
                     float(seconds) if isinstance(seconds, int | float) else None)


def measured_scores(model: str, runs: Sequence[EvalRun]) -> dict[str, ModeScore]:
    """The latest ``dag_goals`` score per mode among ``runs`` of ``model`` (newest first)."""
    scores: dict[str, ModeScore] = {}
    for run in runs:
        if run.model != model or run.mode in scores:
            continue
        score = _score(run)
        if score is not None:
            scores[run.mode] = score
    return scores


def shipped_scores(model: str) -> dict[str, ModeScore]:
    """The measurement shipped with the app for ``model`` (the bundled one), if any."""
    try:
        data: dict[str, Any] = json.loads(
            (resources_dir() / "eval" / "mode_baselines.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    entry = data.get(model) or {}
    return {mode: ModeScore(int(v["passed"]), int(v["total"]), v.get("seconds"))
            for mode, v in entry.items() if mode in ("react", "dag") and isinstance(v, dict)}


def dag_advice(model: str, runs: Sequence[EvalRun] = ()) -> str | None:
    """A sentence advising ReAct for ``model``, or None when DAG mode did as well."""
    scores = measured_scores(model, runs)
    source = "your evaluation runs"
    if not {"react", "dag"} <= scores.keys():
        scores, source = shipped_scores(model), "the built-in evaluation"
    if not {"react", "dag"} <= scores.keys():
        return None
    react, dag = scores["react"], scores["dag"]
    slower = (dag.seconds is not None and react.seconds
              and dag.seconds >= SLOWER * react.seconds)
    if dag.rate > react.rate or (dag.rate == react.rate and not slower):
        return None
    timing = ""
    if dag.seconds is not None and react.seconds:
        timing = f", {dag.seconds:.0f} s against {react.seconds:.0f} s per goal"
    return (f"ReAct is suggested for {model}: in {source}, DAG plans reached "
            f"{dag.passed}/{dag.total} multi-step goals and ReAct {react.passed}/{react.total}"
            f"{timing}.")
