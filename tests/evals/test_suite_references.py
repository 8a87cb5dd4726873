"""Every task of the built-in suite (both splits) and of the benchmark's fresh phrasings
(``benchmarks/fresh_phrasings*.json``) is checkable: its reference result passes ``judge()``
and its near-miss (a plausible wrong result) fails it.

The results are put into a real task world the way a run leaves them: the answer text, a
note in the world's notes, a file in its workspace, a document made by the real
``make_table``/``make_chart``/``make_report`` tool, and for document questions a
``search_documents`` result whose passage [1] comes from the cited file.
"""

from __future__ import annotations

import asyncio
import re
import shutil
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from desktop_app.core.evals.runner import LIBRARY_COLLECTION, World, judge, make_world
from desktop_app.core.evals.suite import EvalSuite, EvalTask, load_suite
from desktop_app.core.tools.builtin.notes import NoteStore
from desktop_app.core.tools.builtin.reports import ChartTool, ReportTool, TableTool
from desktop_app.core.tools.builtin.search_documents import CITE_HINT, PASSAGE_CHARS

SUITE = load_suite()
TASKS = SUITE.tasks
#: New phrasings written after the splits, by a helper who saw neither the agent's code nor
#: the held-out split: a check of the numbers on requests nobody tuned on.
BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
FRESH = load_suite(BENCHMARKS / "fresh_phrasings.json")
#: Written in the seventh session, before that session's agent changes were measured.
FRESH_2 = load_suite(BENCHMARKS / "fresh_phrasings_2.json")
#: Written in the ninth session, before that session's agent changes were measured.
FRESH_3 = load_suite(BENCHMARKS / "fresh_phrasings_3.json")
#: Written in the fourteenth session by a helper blind to the agent's code, before that session's
#: agent changes were measured.
FRESH_4 = load_suite(BENCHMARKS / "fresh_phrasings_4.json")
#: Written in the thirteenth session by a helper who read neither the agent's code nor any
#: run of it, before they were run.
FRESH_5 = load_suite(BENCHMARKS / "fresh_phrasings_5.json")
#: Written in the fourteenth session by a helper who read neither the agent's code nor any run of
#: it, before they were run.
FRESH_6 = load_suite(BENCHMARKS / "fresh_phrasings_6.json")
FRESH_SETS = {"fresh": FRESH, "fresh2": FRESH_2, "fresh3": FRESH_3, "fresh4": FRESH_4,
              "fresh5": FRESH_5, "fresh6": FRESH_6}
CASES = [(SUITE, task) for task in TASKS] + [(fresh, task) for fresh in FRESH_SETS.values()
                                             for task in fresh.tasks]
_ARTIFACT_TOOLS = {"make_chart": ChartTool, "make_table": TableTool, "make_report": ReportTool}
_PLACEHOLDER = re.compile(r"\{(TIME(?:[+-]\d+)?:[\w/+-]+|TODAY|YESTERDAY|WEEKDAY)\}")


def _fill(text: str) -> str:
    """The placeholders with the values the checks will compare against (the local date
    and weekday, the clock time in a zone, perhaps shifted by N minutes)."""
    now = datetime.now().astimezone()

    def value(match: re.Match[str]) -> str:
        name = match.group(1)
        if name == "TODAY":
            return now.date().isoformat()
        if name == "YESTERDAY":
            return (now.date() - timedelta(days=1)).isoformat()
        if name == "WEEKDAY":
            return now.strftime("%A")
        shift, zone = name[4:].split(":", 1)
        moment = now + timedelta(minutes=int(shift or 0))
        return moment.astimezone(ZoneInfo(zone)).strftime("%H:%M")

    return _PLACEHOLDER.sub(value, text)


def _filled(value: Any) -> Any:
    if isinstance(value, str):
        return _fill(value)
    if isinstance(value, list):
        return [_filled(v) for v in value]
    if isinstance(value, dict):
        return {k: _filled(v) for k, v in value.items()}
    return value


def _search_result(suite: EvalSuite, cited: str) -> str:
    """What ``search_documents`` returns: passage [1] from the cited file, [2] another."""
    files = [name for name in suite.library if name.endswith(cited)]
    others = [name for name in suite.library if not name.endswith(cited)]
    blocks = []
    for number, name in enumerate([*files[:1], *others[:1]], start=1):
        content = suite.library[name]
        heading = next((line.lstrip("#").strip() for line in content.splitlines()
                        if line.startswith("#")), "")
        label = f"{LIBRARY_COLLECTION}/{name}" + (f" › {heading}" if heading else "")
        text = " ".join(content.split())
        if len(text) > PASSAGE_CHARS:
            text = text[:PASSAGE_CHARS].rsplit(" ", 1)[0] + " …"
        blocks.append(f"[{number}] {label}\n{text}")
    return "\n\n".join(blocks) + f"\n\n{CITE_HINT}"


def _put(world: World, suite: EvalSuite, task: EvalTask, result: dict[str, Any]) -> str:
    """Leave ``result`` in ``world`` as a run would; the answer text."""
    result = _filled(result)
    answer = result.get("answer", "")
    if "note" in result:
        NoteStore(world.notes).create(result["note"]["title"], result["note"]["body"])
    if "file" in result:
        target = world.workspace / str(task.expect["file"]["path"])
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(result["file"], encoding="utf-8")
    if "artifact" in result:
        made = result["artifact"]
        tool, args = made["tool"], made["args"]
        made_by = _ARTIFACT_TOOLS[tool]()
        args = made_by.validate(args)  # as a real call is: a wrong argument name fails here
        outcome = asyncio.run(made_by.run(args))
        assert outcome.ok, f"{tool} failed on the result's arguments: {outcome.error}"
        world.artifacts.extend(outcome.artifacts)
        world.calls.append((tool, args))
    cited = task.expect.get("answer", {}).get("cites")
    if cited:
        world.observations.append(_search_result(suite, cited))
    return answer


def _tools(task: EvalTask) -> list[str]:
    if task.expect_tools:
        return task.expect_tools[:1]
    return ["calculator"] if task.needs_tool or task.tool_required else []


def _judged(suite: EvalSuite, task: EvalTask, result: dict[str, Any]) -> tuple[bool, str]:
    world = make_world(suite, task=task)
    try:
        answer = _put(world, suite, task, result)
        return judge(task, answer, _tools(task), world, None)
    finally:
        shutil.rmtree(world.root, ignore_errors=True)


def test_the_suite_has_both_splits_and_a_reference_for_every_task() -> None:
    assert {t.split for t in TASKS} == {"dev", "heldout"}
    assert all(t.reference and t.near_miss for t in TASKS)
    for task in TASKS:
        assert set(task.reference or {}) <= set(task.expect) | {"answer"}, task.id
        assert set(task.near_miss or {}) <= set(task.expect) | {"answer"}, task.id


@pytest.mark.parametrize("fresh", FRESH_SETS.values(), ids=FRESH_SETS.keys())
def test_the_fresh_phrasings_are_all_held_out_and_cover_every_kind(fresh: EvalSuite) -> None:
    assert {t.split for t in fresh.tasks} == {"heldout"}
    assert {t.kind for t in fresh.tasks} == {"original", "near_miss", "language"}
    assert {t.id for t in fresh.tasks}.isdisjoint(t.id for t in TASKS)
    assert {t.prompt for t in fresh.tasks}.isdisjoint(t.prompt for t in TASKS)


@pytest.mark.parametrize(("suite", "task"), CASES, ids=[t.id for _, t in CASES])
def test_the_reference_passes(suite: EvalSuite, task: EvalTask) -> None:
    passed, reason = _judged(suite, task, task.reference or {})
    assert passed, reason


@pytest.mark.parametrize(("suite", "task"), CASES, ids=[t.id for _, t in CASES])
def test_the_near_miss_fails(suite: EvalSuite, task: EvalTask) -> None:
    passed, _reason = _judged(suite, task, task.near_miss or {})
    assert not passed, "the near-miss passes the checks"
