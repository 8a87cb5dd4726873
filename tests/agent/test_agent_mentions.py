"""Files named in the question are read before the model's first turn (native mode)."""

from __future__ import annotations

from pathlib import Path

import pytest
from agent_helpers import Recorder

from desktop_app.core.agent import IterationDone, ReActAgent, drive_run
from desktop_app.core.agent.mentions import mentioned_files
from desktop_app.core.llm.testing import ScriptedLLM
from desktop_app.core.tools.base import ToolRegistry
from desktop_app.core.tools.builtin.files import file_tools
from desktop_app.core.tools.builtin.notes import NoteStore, note_tools
from desktop_app.core.tools.sandbox import Workspace

pytestmark = pytest.mark.anyio


def test_file_names_are_found_in_prose() -> None:
    assert mentioned_files("What is the total in expenses.csv?") == ["expenses.csv"]
    assert mentioned_files("See notes/todo.md, then todo.md and notes/todo.md.") == [
        "notes/todo.md", "todo.md"]
    assert mentioned_files("Version 2.5 costs 3.50 euros") == []
    assert len(mentioned_files("a.txt b.txt c.txt d.txt")) == 3  # never a flood of reads


def _registry(tmp_path: Path) -> ToolRegistry:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "expenses.csv").write_text("item,amount\ncoffee,3.20\nbooks,45.00\n")
    return ToolRegistry(file_tools(Workspace(root)))


async def test_a_named_workspace_file_is_read_first_and_shown_as_a_tool_card(
        tmp_path: Path) -> None:
    llm = ScriptedLLM(["unused: cut short", "The total is 48.20."], tool_call=True)
    events = Recorder()
    outcome = await drive_run(ReActAgent(llm, _registry(tmp_path)),
                              "What is the total of the amount column in expenses.csv?",
                              emit=events)
    [card] = events.of(IterationDone)
    assert card.tool_name == "read_file" and "coffee,3.20" in card.observation
    first = llm.requests[0].messages
    # The model sees the read as its own call and result, before its first turn.
    assert [m.role for m in first] == ["system", "user", "assistant", "tool"]
    assert first[2].tool_calls[0].name == "read_file" and "books,45.00" in first[3].content
    assert outcome.answer.endswith("48.20.")


async def test_names_that_are_not_workspace_files_are_ignored(tmp_path: Path) -> None:
    llm = ScriptedLLM(["Node.js is a runtime."], tool_call=True)
    events = Recorder()
    await drive_run(ReActAgent(llm, _registry(tmp_path)), "What is Node.js? Not in ../x.txt",
                    emit=events)
    assert not events.of(IterationDone)
    assert [m.role for m in llm.requests[0].messages] == ["system", "user"]


async def test_without_file_tools_nothing_is_read() -> None:
    llm = ScriptedLLM(["ok"], tool_call=True)
    events = Recorder()
    await drive_run(ReActAgent(llm, ToolRegistry()), "open expenses.csv", emit=events)
    assert not events.of(IterationDone)


async def test_a_question_about_my_notes_starts_with_a_notes_search(tmp_path: Path) -> None:
    store = NoteStore(tmp_path / "notes")
    store.create("Wifi password", "The guest wifi password is sunflower42.")
    store.create("Parking", "Level 3, spot B17.")
    llm = ScriptedLLM(["The password is sunflower42."], tool_call=True)
    events = Recorder()
    await drive_run(ReActAgent(llm, ToolRegistry(note_tools(store))),
                    "What is the guest wifi password? It is in my notes.", emit=events)
    [card] = events.of(IterationDone)
    assert card.tool_name == "notes_find" and "sunflower42" in card.observation
    assert "B17" not in card.observation
    first = llm.requests[0].messages
    assert [m.role for m in first] == ["system", "user", "assistant", "tool"]


async def test_saving_a_note_does_not_search_first(tmp_path: Path) -> None:
    llm = ScriptedLLM(["Which text?"], tool_call=True)
    events = Recorder()
    await drive_run(ReActAgent(llm, ToolRegistry(note_tools(NoteStore(tmp_path / "n")))),
                    "Save a note titled 'Tip'", emit=events)
    assert not events.of(IterationDone)
