"""Artifact tools: reports (HTML or Markdown), tables from rows, and bar/line charts as SVG.

Every document is self-contained: no scripts, no external stylesheets, fonts or images, and
a Content-Security-Policy that forbids loading anything. Everything the model supplies is
escaped (Markdown is rendered by markdown-it with raw HTML disabled and images removed), so
a report cannot smuggle markup into the preview. The LLM only sees the engine's summary line.
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from typing import Any

from markdown_it import MarkdownIt

from desktop_app.core.errors import ToolArgumentError
from desktop_app.core.tools.base import Artifact, Tool, ToolResult
from desktop_app.core.tools.builtin.artifact import slugify
from desktop_app.core.tools.builtin.charts import render_chart

MAX_TEXT_CHARS = 200_000
MAX_ROWS = 2_000
MAX_COLUMNS = 50

#: Forbids every network or file load; inline styles are the only thing allowed.
CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"

_STYLE = """body{font-family:system-ui,sans-serif;margin:2rem;line-height:1.5;color:#222}
table{border-collapse:collapse;margin:1rem 0}th,td{border:1px solid #aaa;padding:.3rem .6rem}
th{background:#f0f0f0}td.num{text-align:right}h1{font-size:1.6rem}pre{background:#f6f6f6;
padding:.5rem;overflow:auto}svg{max-width:100%;height:auto}"""


def html_page(title: str, body_html: str) -> str:
    """A complete HTML document around trusted ``body_html`` (already escaped)."""
    return ("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            f"<meta http-equiv=\"Content-Security-Policy\" content=\"{CSP}\">\n"
            f"<title>{html.escape(title)}</title>\n<style>{_STYLE}</style>\n</head>\n<body>\n"
            f"<h1>{html.escape(title)}</h1>\n{body_html}\n</body>\n</html>\n")


def _image_as_text(renderer: Any, tokens: Any, idx: int, options: Any, env: Any) -> str:
    # An image would be a load from elsewhere (a tracker, a leak); show its alt text instead.
    alt = "".join(child.content for child in tokens[idx].children or [])
    return f"[image: {html.escape(alt)}]" if alt else "[image]"


def _markdown() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False}).enable("table")
    md.add_render_rule("image", _image_as_text)
    return md


def markdown_to_html(text: str) -> str:
    """Markdown rendered safely: raw HTML is escaped, images are not rendered."""
    return str(_markdown().render(text))


def _check_size(text: str, what: str) -> None:
    if len(text) > MAX_TEXT_CHARS:
        raise ToolArgumentError(f"The {what} has {len(text):,} characters; the limit is "
                                f"{MAX_TEXT_CHARS:,}.", hint="Make it shorter.")


def _artifact(title: str, fmt: str, html_body: str, markdown: str) -> Artifact:
    if fmt == "markdown":
        return Artifact(name=f"{slugify(title)}.md", mime_type="text/markdown",
                        content=f"# {title}\n\n{markdown.strip()}\n")
    return Artifact(name=f"{slugify(title)}.html", mime_type="text/html",
                    content=html_page(title, html_body))


_FORMAT = {"type": "string", "enum": ["html", "markdown"], "default": "html"}


class ReportTool(Tool):
    """A document of titled sections whose text is Markdown."""

    name = "make_report"
    description = "Make a report the user sees in the preview pane: a title and sections"
    parameters: Mapping[str, Any] = {
        "type": "object",
        "properties": {
            "title": {"type": "string", "minLength": 1},
            "sections": {"type": "array", "minItems": 1, "items": {
                "type": "object",
                "properties": {"heading": {"type": "string"}, "text": {"type": "string"}},
                "required": ["text"]}},
            "format": _FORMAT,
        },
        "required": ["title", "sections"],
        "additionalProperties": False,
    }

    async def run(self, args: dict[str, Any]) -> ToolResult:
        title = args["title"].strip() or "Report"
        parts_md, parts_html = [], []
        for section in args["sections"]:
            heading, text = (section.get("heading") or "").strip(), section.get("text", "")
            parts_md.append(f"## {heading}\n\n{text}" if heading else text)
            parts_html.append((f"<h2>{html.escape(heading)}</h2>\n" if heading else "")
                              + markdown_to_html(text))
        markdown = "\n\n".join(parts_md)
        _check_size(markdown, "report")
        art = _artifact(title, args.get("format", "html"), "\n".join(parts_html), markdown)
        return ToolResult(text=f"Created report '{art.name}' with {len(parts_md)} section(s).",
                          artifacts=[art],
                          confirmation=f"Here is the report “{title}” "
                                       f"({_count(len(parts_md), 'section')}).")


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.10g}"
    return str(value)


def normalise_rows(columns: list[str] | None, rows: list[Any]) -> tuple[list[str], list[list[str]]]:
    """Columns and string cells from rows given as lists or as objects (keys become columns)."""
    if not rows:
        raise ToolArgumentError("The table has no rows.", hint="Pass at least one row.")
    if len(rows) > MAX_ROWS:
        raise ToolArgumentError(f"{len(rows)} rows is more than the limit of {MAX_ROWS}.")
    if all(isinstance(r, dict) for r in rows):
        cols = list(columns or dict.fromkeys(k for r in rows for k in r))
        cells = [[_cell(r.get(c)) for c in cols] for r in rows]
    elif all(isinstance(r, list) for r in rows):
        width = max(len(r) for r in rows)
        cols = list(columns or [f"Column {i + 1}" for i in range(width)])
        if width > len(cols):
            raise ToolArgumentError(f"A row has {width} cells but there are only {len(cols)} "
                                    f"columns.", hint="Give one column name per cell.")
        cells = [[_cell(v) for v in r] + [""] * (len(cols) - len(r)) for r in rows]
    else:
        raise ToolArgumentError("Rows must all be lists (cells in column order) or all be "
                                "objects (column name → value).")
    if len(cols) > MAX_COLUMNS:
        raise ToolArgumentError(f"{len(cols)} columns is more than the limit of {MAX_COLUMNS}.")
    return [str(c) for c in cols], cells


def _is_number(text: str) -> bool:
    try:
        float(text.replace(",", ""))
        return True
    except ValueError:
        return False


def table_html(columns: list[str], cells: list[list[str]]) -> str:
    head = "".join(f"<th>{html.escape(c)}</th>" for c in columns)
    def td(v: str) -> str:
        numeric = ' class="num"' if v and _is_number(v) else ""
        return f"<td{numeric}>{html.escape(v)}</td>"
    body = "\n".join("<tr>" + "".join(td(v) for v in row) + "</tr>" for row in cells)
    return f"<table>\n<thead><tr>{head}</tr></thead>\n<tbody>\n{body}\n</tbody>\n</table>"


def table_markdown(columns: list[str], cells: list[list[str]]) -> str:
    def esc(v: str) -> str:  # a pipe or newline would break the table's structure
        return v.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")
    lines = ["| " + " | ".join(esc(c) for c in columns) + " |",
             "| " + " | ".join("---" for _ in columns) + " |"]
    lines += ["| " + " | ".join(esc(v) for v in row) + " |" for row in cells]
    return "\n".join(lines)


class TableTool(Tool):
    """A table document from rows (lists or objects)."""

    name = "make_table"
    description = "Make a table the user sees in the preview pane, from columns and rows"
    parameters: Mapping[str, Any] = {
        "type": "object",
        "properties": {
            "title": {"type": "string", "minLength": 1},
            "columns": {"type": "array", "items": {"type": "string"}},
            "rows": {"type": "array", "minItems": 1,
                     "items": {"type": ["array", "object"]}},
            "format": _FORMAT,
        },
        "required": ["title", "rows"],
        "additionalProperties": False,
    }

    async def run(self, args: dict[str, Any]) -> ToolResult:
        columns, cells = normalise_rows(args.get("columns"), args["rows"])
        markdown = table_markdown(columns, cells)
        _check_size(markdown, "table")
        title = args["title"].strip() or "Table"
        art = _artifact(title, args.get("format", "html"), table_html(columns, cells), markdown)
        return ToolResult(text=f"Created table '{art.name}' ({len(cells)} rows × "
                               f"{len(columns)} columns).", artifacts=[art],
                          confirmation=f"Here is the table “{title}” ({_count(len(cells), 'row')}"
                                       f" × {_count(len(columns), 'column')}).")


class ChartTool(Tool):
    """A bar or line chart drawn as inline SVG in an HTML document."""

    name = "make_chart"
    description = "Create a bar or line chart (SVG) from labels and number series"
    parameters: Mapping[str, Any] = {
        "type": "object",
        "properties": {
            "title": {"type": "string", "minLength": 1},
            "kind": {"type": "string", "enum": ["bar", "line"], "default": "bar"},
            "labels": {"type": "array", "minItems": 1, "items": {"type": ["string", "number"]}},
            "series": {"type": "array", "minItems": 1, "items": {
                "type": "object",
                "properties": {"name": {"type": "string"},
                               "values": {"type": "array", "items": {"type": ["number", "null"]}}},
                "required": ["values"]}},
            "x_label": {"type": "string"},
            "y_label": {"type": "string"},
        },
        "required": ["title", "labels", "series"],
        "additionalProperties": False,
    }

    async def run(self, args: dict[str, Any]) -> ToolResult:
        title = args["title"].strip() or "Chart"
        labels = [str(v) for v in args["labels"]]
        series = [(s.get("name") or f"Series {i + 1}", s["values"])
                  for i, s in enumerate(args["series"])]
        svg = render_chart(args.get("kind", "bar"), labels, series,
                           x_label=args.get("x_label", ""), y_label=args.get("y_label", ""))
        columns = ["Label"] + [name for name, _ in series]
        cells = [[label] + [_cell(vals[i]) if i < len(vals) else "" for _, vals in series]
                 for i, label in enumerate(labels)]
        body = (f"{svg}\n<details><summary>Data</summary>\n{table_html(columns, cells)}\n"
                "</details>")
        art = Artifact(name=f"{slugify(title)}.html", mime_type="text/html",
                       content=html_page(title, body))
        kind = args.get("kind", "bar")
        return ToolResult(text=f"Created {kind} chart '{art.name}' with "
                               f"{len(series)} series of {len(labels)} points.", artifacts=[art],
                          confirmation=f"Here is the {kind} chart “{title}” "
                                       f"({_count(len(labels), 'point')}: "
                                       f"{_cut_list(labels)}).")


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}" + ("" if number == 1 else "s")


def _cut_list(items: list[str], limit: int = 6) -> str:
    """'Jan, Feb, Mar' or 'Jan, Feb, … Dec' for a long list."""
    if len(items) <= limit:
        return ", ".join(items)
    return ", ".join(items[:limit - 1]) + f", … {items[-1]}"


def report_tools() -> list[Tool]:
    """The three document/artifact tools."""
    return [ReportTool(), TableTool(), ChartTool()]
