"""A file write_file replaced keeps its previous version outside the workspace, and it can
be put back (and the putting back undone)."""

from __future__ import annotations

from pathlib import Path

import pytest

from desktop_app.core.tools import previous_versions
from desktop_app.core.tools.builtin.files import WriteFileTool
from desktop_app.core.tools.sandbox import Workspace

pytestmark = pytest.mark.anyio


async def test_a_replaced_file_can_be_put_back_and_that_undone(tmp_path: Path,
                                                               app_home: Path) -> None:
    folder = tmp_path / "ws"
    folder.mkdir()
    (folder / "todo.md").write_text("- call the bank\n- buy milk\n")
    workspace = Workspace(folder)
    tool = WriteFileTool(workspace)
    result = await tool.run({"path": "todo.md", "content": "- nothing\n"})
    assert result.ok and "previous version is kept" in result.text
    assert (folder / "todo.md").read_text() == "- nothing\n"
    meta = previous_versions.kept(workspace, "todo.md")
    assert meta is not None and meta["path"] == "todo.md"
    assert not any(p.name != "todo.md" for p in folder.iterdir())  # nothing in the workspace
    assert previous_versions.restore(workspace, "todo.md") == "todo.md"
    assert (folder / "todo.md").read_text() == "- call the bank\n- buy milk\n"
    previous_versions.restore(workspace, "todo.md")  # undo the restore
    assert (folder / "todo.md").read_text() == "- nothing\n"


async def test_creating_or_appending_keeps_nothing(tmp_path: Path, app_home: Path) -> None:
    folder = tmp_path / "ws"
    folder.mkdir()
    workspace = Workspace(folder)
    tool = WriteFileTool(workspace)
    created = await tool.run({"path": "new.txt", "content": "a"})
    appended = await tool.run({"path": "new.txt", "content": "b", "append": True})
    assert "previous version" not in created.text + appended.text
    assert previous_versions.kept(workspace, "new.txt") is None
    with pytest.raises(Exception, match="No earlier version"):
        previous_versions.restore(workspace, "new.txt")
