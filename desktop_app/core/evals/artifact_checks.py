"""Checks of what a document tool made: a chart's kind and values, a table's cells and order.

They read the arguments of the tool's successful call (what was drawn), not its HTML, so a
bar chart of 1, 1, 1, 1 never passes for the sales chart, and a line chart asked for is not
passed by a bar chart with the right labels.
"""

from __future__ import annotations

import math
import re
from typing import Any


def _same(found: Any, wanted: Any) -> bool:
    """Cells and labels compare as numbers when both are numbers, else as words."""
    try:
        return math.isclose(float(str(found).replace(",", "")), float(wanted), rel_tol=0.01)
    except (TypeError, ValueError):
        pass
    return " ".join(str(wanted).lower().split()) in " ".join(str(found).lower().split())


def check_chart(calls: list[dict[str, Any]], spec: dict[str, Any]) -> str | None:
    """None when one of the ``make_chart`` calls has the kind, labels and values asked for."""
    if not calls:
        return "no chart was made"
    reasons = [_chart_reason(call, spec) for call in calls]
    return None if None in reasons else reasons[-1]


def _chart_reason(args: dict[str, Any], spec: dict[str, Any]) -> str | None:
    kind = str(args.get("kind") or "bar")
    if "kind" in spec and kind != spec["kind"]:
        return f"a {kind} chart, not a {spec['kind']} chart"
    labels = [str(label) for label in args.get("labels") or []]
    if "labels" in spec:
        wanted = [str(label) for label in spec["labels"]]
        if len(labels) != len(wanted) or not all(map(_same, labels, wanted)):
            return f"labels {labels}, expected {wanted}"
    if "values" in spec:
        series = args.get("series") or []
        values = series[0].get("values") if series and isinstance(series[0], dict) else None
        wanted_values = list(spec["values"])
        if not isinstance(values, list) or len(values) != len(wanted_values) or not all(
                v is not None and _same(v, w) for v, w in zip(values, wanted_values)):
            return f"values {values}, expected {wanted_values}"
    return None


def _rows_of(args: dict[str, Any]) -> list[list[str]]:
    rows = args.get("rows") or []
    columns = [str(c) for c in args.get("columns") or []]
    out = []
    for row in rows:
        if isinstance(row, dict):
            keys = columns or list(row)
            out.append([str(row.get(k, "")) for k in keys] + [
                str(v) for k, v in row.items() if k not in keys])
        elif isinstance(row, list):
            out.append([str(cell) for cell in row])
        else:
            out.append([str(row)])
    return out


def check_table(calls: list[dict[str, Any]], spec: dict[str, Any]) -> str | None:
    """None when a ``make_table`` call holds every expected row (its cells in one row), in
    the given order when ``ordered``."""
    if not calls:
        return "no table was made"
    reasons = [_table_reason(_rows_of(call), spec) for call in calls]
    return None if None in reasons else reasons[-1]


def _table_reason(rows: list[list[str]], spec: dict[str, Any]) -> str | None:
    positions = []
    for wanted in spec.get("rows", []):
        match = next((index for index, row in enumerate(rows)
                      if all(any(_same(cell, w) for cell in row) for w in wanted)), None)
        if match is None:
            return f"no row with {wanted}"
        positions.append(match)
    if spec.get("ordered") and positions != sorted(positions):
        return "the rows are not in the order asked for"
    return None


def visible_text(html: str) -> str:
    """The words of an HTML document (tags, scripts and styles removed)."""
    html = re.sub(r"<(script|style)\b.*?</\1>", " ", html, flags=re.DOTALL | re.IGNORECASE)
    return " ".join(re.sub(r"<[^>]+>", " ", html).split())
