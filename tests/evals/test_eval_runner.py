"""Running suite tasks in scratch worlds, judging side effects, storing runs (fake models)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from desktop_app.core.evals import EvalSuite, Summary, load_suite, react_runner, run_suite
from desktop_app.core.evals.suite import builtin_suite_path
from desktop_app.core.llm.testing import FunctionLLM, Request, tool_call_reply
from desktop_app.core.llm.types import ChatMessage

pytestmark = pytest.mark.anyio


def suite(*tasks: dict[str, object], **world: object) -> EvalSuite:
    return EvalSuite.model_validate({"name": "t", "tasks": list(tasks), **world})


def test_the_builtin_suite_is_complete() -> None:
    built_in = load_suite()
    categories = {t.category for t in built_in.tasks}
    assert len(built_in.tasks) >= 60
    assert sum(1 for t in built_in.tasks if not t.needs_tool) >= 15
    assert {"arithmetic", "units", "dates", "notes", "files", "documents", "multi_step",
            "dag_goals", "no_tool"} <= categories
    assert builtin_suite_path().is_file()


def test_a_broken_suite_file_gets_a_clear_error(tmp_path: Path) -> None:
    from desktop_app.core.errors import ConfigError

    bad = tmp_path / "s.json"
    bad.write_text(json.dumps({"name": "x", "tasks": [{"id": "a", "category": "c",
                                                        "prompt": "p", "expect": {"mood": {}}}]}))
    with pytest.raises(ConfigError, match="not a valid suite"):
        load_suite(bad)


def _note_then_answer(request: Request) -> ChatMessage | str:
    if any(m.role == "tool" for m in request.messages):
        return "Saved."
    return tool_call_reply(("note_create", {"title": "Groceries", "text": "milk, eggs"}))


async def test_a_note_task_is_judged_by_the_note_it_left_in_its_own_world() -> None:
    llm = FunctionLLM(_note_then_answer, tool_call=True)
    tasks = suite({"id": "n", "category": "notes", "prompt": "Save groceries",
                   "expect": {"note": {"title": "groceries", "contains": ["milk", "eggs"]}}})
    [result] = await run_suite(tasks, react_runner(llm))
    assert result.passed and result.tools == ["note_create"]
    # The user's own notes folder was not touched.
    from desktop_app.core.tools.builtin.notes import NoteStore

    assert NoteStore().all() == []


async def test_a_tool_call_on_a_no_tool_question_fails_even_with_the_right_answer() -> None:
    def reply(request: Request) -> ChatMessage | str:
        if any(m.role == "tool" for m in request.messages):
            return "Paris"
        return tool_call_reply(("current_time", {}))

    tasks = suite({"id": "p", "category": "no_tool", "prompt": "Capital of France?",
                   "needs_tool": False, "expect": {"answer": {"contains": ["paris"]}}})
    [result] = await run_suite(tasks, react_runner(FunctionLLM(reply, tool_call=True)))
    assert not result.passed and "needs no tool" in result.reason


async def test_workspace_files_are_there_and_a_wrong_total_fails() -> None:
    seen: list[str] = []

    def reply(request: Request) -> ChatMessage | str:
        tool_results = [m.content for m in request.messages if m.role == "tool"]
        if tool_results:
            seen.extend(tool_results)
            return "The total is 5."
        return tool_call_reply(("read_file", {"path": "a.csv"}))

    tasks = suite({"id": "f", "category": "files", "prompt": "Total of a.csv?",
                   "expect": {"answer": {"number": 6}}}, workspace={"a.csv": "x\n1\n5\n"})
    [result] = await run_suite(tasks, react_runner(FunctionLLM(reply, tool_call=True)))
    assert any("5" in text for text in seen)
    assert not result.passed and "expected 6" in result.reason


async def test_printing_a_call_instead_of_answering_fails() -> None:
    llm = FunctionLLM(lambda r: '{"name": "calculator", "arguments": {"expression": "1"}} = 1',
                      tool_call=True)
    tasks = suite({"id": "c", "category": "arithmetic", "prompt": "1?",
                   "expect": {"answer": {"number": 1}}})
    [result] = await run_suite(tasks, react_runner(llm))
    assert not result.passed and "tool-call text" in result.reason


async def test_runs_are_stored_and_listed() -> None:
    from desktop_app.core.store.async_store import AsyncStore

    llm = FunctionLLM(lambda r: "Paris", tool_call=True)
    tasks = suite({"id": "p", "category": "no_tool", "prompt": "Capital of France?",
                   "needs_tool": False, "expect": {"answer": {"contains": ["paris"]}}})
    results = await run_suite(tasks, react_runner(llm))
    summary = Summary.of("fake", results)
    async with await AsyncStore.open() as store:
        saved = await store.save_eval_run(model="fake", mode="react", suite="t",
                                          results=results, summary=summary.to_dict())
        [listed] = await store.list_eval_runs()
        rows = await store.eval_results(saved.id)
    assert listed.id == saved.id and listed.passed == 1 and listed.summary["no_tool"]["passed"] == 1
    assert rows[0]["task_id"] == "p" and rows[0]["passed"] is True and rows[0]["answer"] == "Paris"


async def test_a_task_that_runs_too_long_is_stopped_and_fails() -> None:
    import asyncio

    from desktop_app.core.evals.runner import run_task

    async def endless(task: object, world: object, emit: object) -> None:
        await asyncio.sleep(3600)

    tasks = suite({"id": "slow", "category": "no_tool", "prompt": "Hi", "needs_tool": False,
                   "expect": {"answer": {"contains": ["hello"]}}})
    result = await run_task(tasks.tasks[0], tasks, endless, limit=0.2)
    assert not result.passed and "time limit" in result.reason
    assert result.seconds < 5
