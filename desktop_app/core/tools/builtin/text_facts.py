"""Counted facts about a file's text, appended to what ``read_file`` returns.

Small local models read a CSV correctly but add its column wrongly ("the total is 18") and
miscount a five-item list as eight. Arithmetic over a file is exactly what a tool should do
for them: the facts are computed here, exactly, and the model only has to quote them.
Nothing is guessed: a column counts as numeric only when every non-empty cell parses.
"""

from __future__ import annotations

import csv
import io
import re
from decimal import Decimal, InvalidOperation

#: Files bigger than this get no facts (they are cut for the model anyway).
MAX_FACT_CHARS = 200_000
#: Columns listed at most (a wide export would drown the useful ones).
MAX_COLUMNS = 12

_LIST_ITEM = re.compile(r"^\s*(?:[-*+•]|\d+[.)])\s+(?:\[[ xX]\]\s*)?\S")
_NUMBER_CLEAN = re.compile(r"[\s$€£¥,]")


def _number(cell: str) -> Decimal | None:
    text = _NUMBER_CLEAN.sub("", cell.strip())
    if not text:
        return None
    try:
        value = Decimal(text)
    except InvalidOperation:
        return None
    return value if value.is_finite() else None


def _fmt(value: Decimal) -> str:
    # Decimal keeps 54.20 + 2.80 exact; "f" writes 100 (not normalize()'s 1E+2) without
    # trailing zeros.
    return format(value.normalize(), "f")


def table_facts(text: str, delimiter: str) -> str:
    """Row count and per numeric column: total, mean, min, max (exact decimals)."""
    rows = [row for row in csv.reader(io.StringIO(text), delimiter=delimiter) if any(row)]
    if len(rows) < 2:
        return ""
    header, body = rows[0], rows[1:]
    lines = [f"{len(body)} data rows; columns: {', '.join(h.strip() for h in header)}."]
    for index, name in enumerate(header[:MAX_COLUMNS]):
        cells = [row[index] for row in body if index < len(row) and row[index].strip()]
        numbers = [_number(cell) for cell in cells]
        if not cells or any(n is None for n in numbers):
            continue
        values = [n for n in numbers if n is not None]
        total = sum(values, Decimal(0))
        mean = total / len(values)
        lines.append(f"Column '{name.strip()}': total {_fmt(total)}, "
                     f"mean {_fmt(round(mean, 4))}, min {_fmt(min(values))}, "
                     f"max {_fmt(max(values))} ({len(values)} values).")
    return "\n".join(lines)


def list_facts(text: str) -> str:
    """How many bullet or numbered list items the text has (0 gives no fact)."""
    count = sum(1 for line in text.splitlines() if _LIST_ITEM.match(line))
    return f"{count} list items." if count else ""


def file_facts(path: str, text: str) -> str:
    """The facts block for a file, or '' when there is nothing exact to say."""
    if not text or len(text) > MAX_FACT_CHARS:
        return ""
    lower = path.lower()
    if lower.endswith((".csv", ".tsv")):
        facts = table_facts(text, "\t" if lower.endswith(".tsv") else ",")
    else:
        facts = list_facts(text)
    return f"\n\n[Counted by the tool: {facts}]" if facts else ""
