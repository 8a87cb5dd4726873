"""An answer never claims that an action the user declined happened: the bundled model,
writing from the trace, said a declined write had "successfully" happened."""

from __future__ import annotations

from pathlib import Path

import pytest

from desktop_app.core.agent import ReActAgent, drive_run
from desktop_app.core.llm.testing import ScriptedLLM, tool_call_reply
from desktop_app.core.tools.base import ToolRegistry
from desktop_app.core.tools.builtin.files import file_tools
from desktop_app.core.tools.sandbox import Workspace

pytestmark = pytest.mark.anyio


async def _deny(_name: str, _args: object, _change: object) -> bool:
    return False


async def test_a_run_where_only_a_declined_write_happened_says_so(tmp_path: Path) -> None:
    write = tool_call_reply(("write_file", {"path": "notes.txt", "content": "hi"}))
    llm = ScriptedLLM([write, "Done.", "I saved notes.txt successfully."], tool_call=True)
    agent = ReActAgent(llm, ToolRegistry(file_tools(Workspace(tmp_path))), confirm=_deny)
    outcome = await drive_run(agent, "save hi to notes.txt", emit=lambda e: None)
    assert "successfully" not in outcome.answer
    assert outcome.answer.startswith("Not done: you declined write_file")
    assert not (tmp_path / "notes.txt").exists()


async def test_when_other_work_ran_the_answer_ends_with_what_was_not_done(
        tmp_path: Path) -> None:
    (tmp_path / "todo.md").write_text("- milk\n")
    read = tool_call_reply(("read_file", {"path": "todo.md"}))
    write = tool_call_reply(("write_file", {"path": "todo.md", "content": "- milk\n- tea\n"}))
    llm = ScriptedLLM([read, write, "Done.", "Your list has milk; I added tea."],
                      tool_call=True)
    agent = ReActAgent(llm, ToolRegistry(file_tools(Workspace(tmp_path))), confirm=_deny)
    outcome = await drive_run(agent, "add tea to todo.md", emit=lambda e: None)
    assert outcome.answer.rstrip().endswith(
        "Not done: you declined write_file, so it did not run and nothing was changed.")
    assert (tmp_path / "todo.md").read_text() == "- milk\n"
