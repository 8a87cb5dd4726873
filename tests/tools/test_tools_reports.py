"""Report, table and chart artifacts: self-contained, escaped, correct shapes; bad inputs."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import pytest

from desktop_app.core.errors import ToolArgumentError
from desktop_app.core.tools.builtin.charts import nice_ticks, render_chart
from desktop_app.core.tools.builtin.reports import ChartTool, ReportTool, TableTool

pytestmark = pytest.mark.anyio

EVIL = '<script>alert(1)</script><img src="http://evil.example/x.png">'


def assert_self_contained(page: str) -> None:
    """No scripts and nothing that would load from elsewhere."""
    lowered = page.lower()
    assert "<script" not in lowered
    # Links (<a href>) only navigate when clicked; anything that *loads* is forbidden.
    assert not re.search(r"""<[^>]*\s(src|srcset|xlink:href)\s*=""", lowered)
    assert "<link" not in lowered and "<img" not in lowered and "<iframe" not in lowered
    assert "@import" not in lowered and "url(" not in lowered
    assert "content-security-policy" in lowered and "default-src 'none'" in lowered


async def test_report_html_renders_markdown_sections() -> None:
    result = await ReportTool().run({"title": "Weekly report", "sections": [
        {"heading": "Summary", "text": "All **good**.\n\n- one\n- two"},
        {"text": "Closing words."}]})
    [art] = result.artifacts
    assert (art.name, art.mime_type) == ("weekly-report.html", "text/html")
    assert "<h1>Weekly report</h1>" in art.content and "<h2>Summary</h2>" in art.content
    assert "<strong>good</strong>" in art.content and "<li>two</li>" in art.content
    assert_self_contained(art.content)
    assert "2 section(s)" in result.text


async def test_report_escapes_html_and_drops_remote_images() -> None:
    result = await ReportTool().run({"title": f"T {EVIL}", "sections": [
        {"heading": EVIL, "text": f"{EVIL}\n\n![tracker](http://evil.example/p.gif)"}]})
    page = result.artifacts[0].content
    assert_self_contained(page)
    assert "&lt;script&gt;" in page
    assert "[image: tracker]" in page and "p.gif" not in page


async def test_report_markdown_format() -> None:
    result = await ReportTool().run({"title": "Notes", "format": "markdown",
                                     "sections": [{"heading": "A", "text": "text a"}]})
    [art] = result.artifacts
    assert (art.name, art.mime_type) == ("notes.md", "text/markdown")
    assert art.content == "# Notes\n\n## A\n\ntext a\n"


async def test_table_from_objects_collects_columns() -> None:
    result = await TableTool().run({"title": "People", "rows": [
        {"name": "Ada", "age": 36}, {"name": "Linus", "city": "Helsinki"}]})
    page = result.artifacts[0].content
    assert "<th>name</th><th>age</th><th>city</th>" in page
    assert '<td class="num">36</td>' in page and "<td>Helsinki</td>" in page
    assert "(2 rows × 3 columns)" in result.text
    assert_self_contained(page)


async def test_table_markdown_escapes_pipes() -> None:
    result = await TableTool().run({"title": "T", "format": "markdown", "columns": ["a", "b"],
                                    "rows": [["x|y", 1], ["line\nbreak"]]})
    lines = result.artifacts[0].content.splitlines()
    assert lines[2:] == ["| a | b |", "| --- | --- |", "| x\\|y | 1 |", "| line break |  |"]


async def test_table_cells_are_escaped() -> None:
    result = await TableTool().run({"title": "T", "rows": [[EVIL]]})
    assert_self_contained(result.artifacts[0].content)


@pytest.mark.parametrize(("rows", "columns", "message"), [
    ([[1, 2, 3]], ["a"], "only 1 columns"),
    ([[1], {"a": 1}], None, "all be lists"),
    ([], None, "no rows"),
])
async def test_table_bad_rows_are_clear_errors(rows: list, columns: list | None, message: str) -> None:
    args = {"title": "T", "rows": rows} | ({"columns": columns} if columns else {})
    with pytest.raises(ToolArgumentError, match=message):
        await TableTool().run(args)


async def test_bar_chart_is_valid_svg_with_one_bar_per_value() -> None:
    result = await ChartTool().run({"title": "Sales", "kind": "bar", "labels": ["Q1", "Q2", "Q3"],
                                    "series": [{"name": "2025", "values": [10, 20, 15]},
                                               {"name": "2026", "values": [12, None, 18]}]})
    page = result.artifacts[0].content
    assert_self_contained(page)
    svg = page[page.index("<svg"): page.index("</svg>") + 6]
    root = ET.fromstring(svg)  # well-formed XML
    bars = [r for r in root.iter("{http://www.w3.org/2000/svg}rect") if r.find(
        "{http://www.w3.org/2000/svg}title") is not None]
    assert len(bars) == 5  # the null value draws no bar
    heights = {b.find("{http://www.w3.org/2000/svg}title").text: float(b.get("height"))
               for b in bars}
    assert heights["2025 – Q2: 20"] == pytest.approx(2 * heights["2025 – Q1: 10"])
    assert "<td>Q1</td>" in page  # the data table for accessibility


async def test_line_chart_breaks_at_gaps() -> None:
    svg = render_chart("line", ["a", "b", "c", "d", "e"], [("s", [1, 2, None, 4, 5])])
    assert svg.count("<polyline") == 2 and svg.count("<circle") == 4


def test_negative_values_hang_below_zero() -> None:
    svg = render_chart("bar", ["up", "down"], [("s", [5, -5])])
    root = ET.fromstring(svg)
    rects = [r for r in root.iter("{http://www.w3.org/2000/svg}rect") if r.get("height") and
             r.find("{http://www.w3.org/2000/svg}title") is not None]
    up, down = rects
    assert float(up.get("y")) + float(up.get("height")) == pytest.approx(float(down.get("y")))


def test_chart_labels_are_escaped() -> None:
    svg = render_chart("bar", [EVIL], [(EVIL, [1])], x_label=EVIL, y_label=EVIL)
    ET.fromstring(svg)
    assert "<script" not in svg


@pytest.mark.parametrize(("labels", "series", "message"), [
    (["a", "b"], [("s", [1])], "has 1 values but there are 2 labels"),
    (["a"], [("s", [None])], "nothing to draw"),
    (["a"], [("s", [float("nan")])], "not a number"),
    ([], [("s", [])], "at least one label"),
])
def test_chart_bad_data_is_a_clear_error(labels: list, series: list, message: str) -> None:
    with pytest.raises(ToolArgumentError, match=message):
        render_chart("bar", labels, series)


def test_unknown_chart_kind() -> None:
    with pytest.raises(ToolArgumentError, match="Use 'bar' or 'line'"):
        render_chart("pie", ["a"], [("s", [1])])


@pytest.mark.parametrize(("low", "high", "expected"), [
    (0, 10, [0, 2, 4, 6, 8, 10]), (0, 7, [0, 2, 4, 6, 8]), (-5, 5, [-6, -4, -2, 0, 2, 4, 6]),
    (0, 0.3, [0, 0.1, 0.2, 0.3])])
def test_nice_ticks(low: float, high: float, expected: list[float]) -> None:
    assert nice_ticks(low, high) == pytest.approx(expected)
