"""Summaries of evaluation results: per category, tool tasks vs. no-tool questions, tables."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field

from desktop_app.core.evals.runner import TaskResult


@dataclass
class Score:
    """Passed out of total, with the time and tokens they took."""

    passed: int = 0
    total: int = 0
    seconds: list[float] = field(default_factory=list)
    tokens: int = 0
    #: Of ``total``, how many called the right tools (``TaskResult.tools_right``).
    tools_right: int = 0

    @property
    def rate(self) -> float:
        return self.passed / self.total if self.total else 0.0

    @property
    def mean_seconds(self) -> float:
        return statistics.fmean(self.seconds) if self.seconds else 0.0

    def add(self, result: TaskResult) -> None:
        self.total += 1
        self.passed += int(result.passed)
        self.seconds.append(result.seconds)
        self.tokens += result.usage.total_tokens
        self.tools_right += int(result.tools_right)

    def cell(self) -> str:
        return f"{self.passed}/{self.total}" if self.total else "–"

    def counts(self) -> dict[str, int]:
        return {"passed": self.passed, "total": self.total, "tools_right": self.tools_right}


def group_of(result: TaskResult) -> str:
    """Which target a task counts towards: English tool tasks, English no-tool questions,
    near-misses (any tool need), or requests in another language."""
    if result.kind == "near_miss":
        return "near_miss"
    if result.language != "en":
        return "non_english"
    return "tool" if result.needs_tool else "no_tool"


@dataclass
class Summary:
    """One model's (or one run's) results, grouped."""

    label: str
    overall: Score = field(default_factory=Score)
    tool_tasks: Score = field(default_factory=Score)
    no_tool: Score = field(default_factory=Score)
    near_miss: Score = field(default_factory=Score)
    non_english: Score = field(default_factory=Score)
    categories: dict[str, Score] = field(default_factory=dict)
    languages: dict[str, Score] = field(default_factory=dict)
    #: Passed tasks by how their tools were called (``TaskResult.route``).
    routes: dict[str, Score] = field(default_factory=dict)
    first_tokens: list[float] = field(default_factory=list)

    @classmethod
    def of(cls, label: str, results: Sequence[TaskResult]) -> Summary:
        summary = cls(label=label)
        for result in results:
            summary.overall.add(result)
            group = {"tool": summary.tool_tasks, "no_tool": summary.no_tool,
                     "near_miss": summary.near_miss, "non_english": summary.non_english}
            group[group_of(result)].add(result)
            summary.categories.setdefault(result.category, Score()).add(result)
            summary.languages.setdefault(result.language, Score()).add(result)
            summary.routes.setdefault(result.route, Score()).add(result)
            if result.first_token is not None:
                summary.first_tokens.append(result.first_token)
        return summary

    @classmethod
    def by_split(cls, label: str, results: Sequence[TaskResult]) -> list[Summary]:
        """One summary per split present in ``results`` ("model · dev", "model · heldout")."""
        splits = list(dict.fromkeys(r.split for r in results))
        if len(splits) <= 1:
            return [cls.of(label, results)]
        return [cls.of(f"{label} · {split}", [r for r in results if r.split == split])
                for split in splits]

    def to_dict(self) -> dict[str, object]:
        """A JSON-ready form (stored with the run, printed by ``eval --json``)."""
        return {
            "label": self.label,
            "passed": self.overall.passed, "total": self.overall.total,
            "tool_tasks": self.tool_tasks.counts(),
            "no_tool": self.no_tool.counts(),
            "near_miss": self.near_miss.counts(),
            "non_english": self.non_english.counts(),
            "languages": {name: {"passed": s.passed, "total": s.total}
                          for name, s in self.languages.items()},
            "routes": {name: {"passed": s.passed, "total": s.total}
                       for name, s in self.routes.items()},
            "mean_seconds": round(self.overall.mean_seconds, 2),
            "median_first_token": (round(statistics.median(self.first_tokens), 2)
                                   if self.first_tokens else None),
            "tokens": self.overall.tokens,
            "categories": {name: {"passed": s.passed, "total": s.total,
                                  "mean_seconds": round(s.mean_seconds, 2)}
                           for name, s in self.categories.items()},
        }


def _ratio(part: int, total: int) -> str:
    return f"{part}/{total} ({part / total:.0%})" if total else "–"


def _pct(score: Score) -> str:
    return _ratio(score.passed, score.total)


def _tools_right(score: Score) -> str:
    return _ratio(score.tools_right, score.total)


def scoreboard(summaries: Sequence[Summary], categories: Sequence[str] | None = None) -> str:
    """A plain-text table, one column per model: categories, totals, time and tokens."""
    names = list(categories or dict.fromkeys(c for s in summaries for c in s.categories))
    rows: list[list[str]] = [["", *[s.label for s in summaries]]]
    for name in names:
        rows.append([name, *[_pct(s.categories.get(name, Score())) for s in summaries]])
    rows.append(["tool tasks", *[_pct(s.tool_tasks) for s in summaries]])
    rows.append(["no-tool questions", *[_pct(s.no_tool) for s in summaries]])
    if any(s.near_miss.total for s in summaries):
        rows.append(["near-misses", *[_pct(s.near_miss) for s in summaries]])
    if any(s.non_english.total for s in summaries):
        rows.append(["other languages", *[_pct(s.non_english) for s in summaries]])
        for language in sorted({lang for s in summaries for lang in s.languages} - {"en"}):
            rows.append([f"  {language}", *[_pct(s.languages.get(language, Score()))
                                             for s in summaries]])
    # Apart from the answers: whether the right tools (or none) were called. A small model
    # can route a request right and still get the fact or the number wrong.
    for group, label in (("tool_tasks", "right tools: tool tasks"),
                         ("no_tool", "right tools: no-tool (none called)"),
                         ("near_miss", "right tools: near-misses"),
                         ("non_english", "right tools: other languages")):
        if any(getattr(s, group).total for s in summaries):
            rows.append([label, *[_tools_right(getattr(s, group)) for s in summaries]])
    for route, label in (("model", "tools chosen by the model"),
                         ("policy", "tools routed by the policy"), ("none", "no tool called")):
        if any(route in s.routes for s in summaries):
            rows.append([label, *[_pct(s.routes.get(route, Score())) for s in summaries]])
    rows.append(["all", *[_pct(s.overall) for s in summaries]])
    rows.append(["mean time per task", *[f"{s.overall.mean_seconds:.1f} s" for s in summaries]])
    rows.append(["median first answer token", *[
        f"{statistics.median(s.first_tokens):.2f} s" if s.first_tokens else "–"
        for s in summaries]])
    rows.append(["tokens", *[f"{s.overall.tokens:,}" for s in summaries]])
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def result_line(result: TaskResult) -> str:
    """One line per task for progress output."""
    mark = "PASS" if result.passed else "FAIL"
    tools = ",".join(result.tools) or "-"
    routed = " (policy)" if result.route == "policy" else ""
    line = (f"{mark} {result.task_id:<24} {result.seconds:5.1f} s  {result.iterations} it  "
            f"tools: {tools}{routed}")
    if not result.passed:
        line += f"  ({result.reason[:120]})"
        if result.calls:
            line += f"\n     calls: {'; '.join(result.calls)[:300]}"
        said = " ".join(result.answer.split())
        if said:
            # What the model said: a reason alone does not tell a wrong fact from a
            # right one the check did not expect.
            line += f"\n     said: {said[:160]}{'…' if len(said) > 160 else ''}"
    return line
