"""Replacing a file's content is said plainly and asked about every time, even after
"Always allow write_file"; creating and appending say what they do."""

from __future__ import annotations

import asyncio
import io
from pathlib import Path

import pytest

from desktop_app.core.agent import ReActAgent
from desktop_app.core.agent.events import Confirm, Event
from desktop_app.core.config.settings import Settings
from desktop_app.core.llm.testing import ScriptedLLM, tool_call_reply
from desktop_app.core.tools.base import Change, ToolRegistry
from desktop_app.core.tools.builtin.files import WriteFileTool, file_tools
from desktop_app.core.tools.confirmation import Confirmer, TerminalConfirmer
from desktop_app.core.tools.sandbox import Workspace

pytestmark = pytest.mark.anyio


async def test_the_change_says_create_append_or_replace(tmp_path: Path) -> None:
    (tmp_path / "todo.md").write_text("- milk\n- eggs\n")
    tool = WriteFileTool(Workspace(tmp_path))
    create = await tool.describe_change({"path": "new.txt", "content": "a\nb\n"})
    append = await tool.describe_change({"path": "todo.md", "content": "- tea\n", "append": True})
    replace = await tool.describe_change({"path": "todo.md", "content": "x"})
    assert create is not None and create.summary.startswith("Create 'new.txt'")
    assert "2 lines" in create.summary and not create.destroys
    assert append is not None and append.summary.startswith("Add ") and not append.destroys
    assert replace is not None and replace.destroys
    assert replace.summary.startswith("Replace 'todo.md' (14 B)") and "lost" in replace.summary


class AnsweringUi:
    def __init__(self, always: bool) -> None:
        self.always = always
        self.confirms: list[Confirm] = []
        self.confirmer = Confirmer(self, settings=Settings())

    def __call__(self, event: Event) -> None:
        if isinstance(event, Confirm):
            self.confirms.append(event)
            asyncio.get_running_loop().call_soon(
                self.confirmer.answer, event.request_id, True, self.always)


async def test_always_allow_does_not_cover_replacing_a_file(tmp_path: Path) -> None:
    (tmp_path / "todo.md").write_text("- milk\n")
    writes = [("write_file", {"path": "a.txt", "content": "one"}),
              ("write_file", {"path": "b.txt", "content": "two"}),
              ("write_file", {"path": "todo.md", "content": "gone"})]
    llm = ScriptedLLM([*(tool_call_reply(w) for w in writes), "done"], tool_call=True)
    ui = AnsweringUi(always=True)
    agent = ReActAgent(llm, ToolRegistry(file_tools(Workspace(tmp_path))),
                       confirm=ui.confirmer)
    result = await agent.run("write three files", on_event=ui)
    assert [s.error for s in result.steps] == [None, None, None]
    # Asked for the first new file (answered "always"), not for the second, again for the
    # replacement, which says what is lost.
    assert [c.tool_args["path"] for c in ui.confirms] == ["a.txt", "todo.md"]
    assert ui.confirms[1].destroys and "Replace 'todo.md'" in (ui.confirms[1].change or "")
    assert not ui.confirms[0].destroys and "Create 'a.txt'" in (ui.confirms[0].change or "")


async def test_the_terminal_shows_the_change_and_asks_again_for_a_replacement() -> None:
    settings = Settings()
    settings.tools.always_allow.append("write_file")
    out = io.StringIO()
    confirmer = TerminalConfirmer(settings=settings, stdin=io.StringIO("n\n"), stdout=out,
                                  interactive=True)
    plain = Change(summary="Create 'a.txt' in your workspace with 3 characters (1 line).")
    assert await confirmer("write_file", {"path": "a.txt"}, plain) is True  # always allowed
    lost = Change(summary="Replace 'todo.md' (7 B) with 4 characters (1 line). Its current "
                          "content will be lost.", destroys=True)
    assert await confirmer("write_file", {"path": "todo.md"}, lost) is False  # asked: "n"
    assert "Replace 'todo.md'" in out.getvalue()
