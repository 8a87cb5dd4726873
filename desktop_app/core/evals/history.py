"""Earlier evaluation runs as a table (``desktop-app eval --history``)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from desktop_app.core.store.evals import EvalRun


def history_table(runs: Sequence[EvalRun]) -> str:
    """One line per stored run: when, model, mode, score, tool/no-tool split, time."""
    rows = [["id", "when", "model", "mode", "passed", "tool tasks", "no-tool", "mean time",
             "version"]]
    for run in runs:
        summary = run.summary
        tool = summary.get("tool_tasks", {})
        plain = summary.get("no_tool", {})
        rows.append([
            str(run.id), datetime.fromtimestamp(run.created_at).strftime("%Y-%m-%d %H:%M"),
            run.model + (" *" if run.options else ""), run.mode, f"{run.passed}/{run.total}",
            f"{tool.get('passed', 0)}/{tool.get('total', 0)}",
            f"{plain.get('passed', 0)}/{plain.get('total', 0)}",
            f"{summary.get('mean_seconds', 0):.1f} s", run.app_version])
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    if any(run.options for run in runs):
        lines.append("* run with non-default agent options")
    return "\n".join(lines)
