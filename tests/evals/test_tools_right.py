"""Whether a task's tools were the right decision, counted apart from its answer."""

from __future__ import annotations

from typing import Any

import pytest

from desktop_app.core.evals import EvalTask, Summary
from desktop_app.core.evals.report import scoreboard
from desktop_app.core.evals.runner import TaskResult


def task(**fields: Any) -> EvalTask:
    return EvalTask.model_validate({"id": "t", "category": "c", "prompt": "p",
                                    "expect": {"answer": {"contains": ["x"]}}, **fields})


@pytest.mark.parametrize(("fields", "called", "right"), [
    ({"needs_tool": False}, [], True),
    ({"needs_tool": False}, ["calculator"], False),
    ({}, [], False),
    ({}, ["calculator"], True),
    ({"expect_tools": ["convert_units"]}, ["calculator"], False),
    ({"expect_tools": ["convert_units"]}, ["calculator", "convert_units"], True),
    ({"expect_tools": ["current_time"], "forbid_tools": ["note_create"]},
     ["current_time", "note_create"], False),
    # What the task checks cannot exist without the tool that makes it.
    ({"expect": {"note": {"title": "tip", "contains": ["63"]}}}, ["calculator"], False),
    ({"expect": {"note": {"title": "tip", "contains": ["63"]}}}, ["calculator", "note_create"],
     True),
    ({"expect": {"artifact": {"chart": {"kind": "line"}}}}, ["make_table"], False),
    ({"expect": {"artifact": {"table": {"rows": 3}}}}, ["convert_units", "make_table"], True),
    ({"expect": {"file": {"path": "a.txt", "contains": ["x"]}}}, ["read_file"], False),
])
def test_tools_right(fields: dict[str, Any], called: list[str], right: bool) -> None:
    assert task(**fields).tools_right(called) is right


def result(*, passed: bool, tools_right: bool, needs_tool: bool = True) -> TaskResult:
    return TaskResult(task_id="t", category="c", needs_tool=needs_tool, passed=passed,
                      tools_right=tools_right)


def test_the_scoreboard_counts_right_tools_apart_from_passes() -> None:
    summary = Summary.of("m", [result(passed=False, tools_right=True),
                               result(passed=True, tools_right=True),
                               result(passed=False, tools_right=False),
                               result(passed=False, tools_right=True, needs_tool=False)])
    assert summary.to_dict()["tool_tasks"] == {"passed": 1, "total": 3, "tools_right": 2}
    assert summary.to_dict()["no_tool"] == {"passed": 0, "total": 1, "tools_right": 1}
    board = scoreboard([summary])
    assert "right tools: tool tasks" in board and "2/3 (67%)" in board
    assert "right tools: no-tool (none called)  1/1 (100%)" in board
