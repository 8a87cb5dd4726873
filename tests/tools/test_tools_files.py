"""Workspace file tools: list, read, write, search — and their refusals and bad inputs."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from tools_helpers import make_workspace

from desktop_app.core.errors import SandboxViolationError, ToolArgumentError, ToolError
from desktop_app.core.tools.builtin.files import (
    ListFilesTool,
    ReadFileTool,
    SearchFilesTool,
    WriteFileTool,
    file_tools,
)
from desktop_app.core.tools.sandbox import Workspace

pytestmark = pytest.mark.anyio


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    return Workspace(make_workspace(tmp_path))


async def test_list_shows_files_and_folders(ws: Workspace) -> None:
    result = await ListFilesTool(ws).run({"path": "."})
    assert "docs/" in result.text and "notes.txt" in result.text and "data.csv" in result.text
    assert "plan.md" not in result.text  # not recursive by default


async def test_list_recursive_includes_nested_files(ws: Workspace) -> None:
    result = await ListFilesTool(ws).run({"recursive": True})
    assert "docs/plan.md" in result.text


async def test_list_of_a_file_is_an_error(ws: Workspace) -> None:
    result = await ListFilesTool(ws).run({"path": "notes.txt"})
    assert result.error and "read_file" in result.error


async def test_read_returns_text(ws: Workspace) -> None:
    result = await ReadFileTool(ws).run({"path": "docs/plan.md"})
    assert result.text.startswith("# Plan") and "Buy milk" in result.text


async def test_read_long_file_in_parts_with_offset(ws: Workspace) -> None:
    (ws.root / "long.txt").write_text("".join(f"{i:05d}" for i in range(2000)))
    first = await ReadFileTool(ws).run({"path": "long.txt", "max_chars": 100})
    assert first.text.startswith("00000") and "offset=100" in first.text
    second = await ReadFileTool(ws).run({"path": "long.txt", "offset": 100, "max_chars": 10})
    assert second.text.startswith("0002000021")


async def test_read_offset_past_end_is_an_error(ws: Workspace) -> None:
    result = await ReadFileTool(ws).run({"path": "data.csv", "offset": 10_000})
    assert result.error and "past the end" in result.error


async def test_read_outside_is_refused(ws: Workspace) -> None:
    with pytest.raises(SandboxViolationError):
        await ReadFileTool(ws).run({"path": "../outside/secret.txt"})


async def test_write_creates_file_and_folders(ws: Workspace) -> None:
    result = await WriteFileTool(ws).run({"path": "out/new/summary.md", "content": "# Hi\n"})
    assert result.ok and "out/new/summary.md" in result.text
    assert (ws.root / "out" / "new" / "summary.md").read_text() == "# Hi\n"


async def test_write_append_adds_to_the_end(ws: Workspace) -> None:
    await WriteFileTool(ws).run({"path": "log.txt", "content": "a\n"})
    await WriteFileTool(ws).run({"path": "log.txt", "content": "b\n", "append": True})
    assert (ws.root / "log.txt").read_text() == "a\nb\n"


async def test_write_outside_is_refused_and_writes_nothing(ws: Workspace, tmp_path: Path) -> None:
    for path in ["../outside/evil.txt", str(tmp_path / "outside" / "evil.txt")]:
        with pytest.raises(SandboxViolationError):
            await WriteFileTool(ws).run({"path": path, "content": "x"})
    assert not (tmp_path / "outside" / "evil.txt").exists()


async def test_write_onto_a_folder_is_an_error(ws: Workspace) -> None:
    with pytest.raises(ToolError, match="folder"):
        await WriteFileTool(ws).run({"path": "docs", "content": "x"})


def test_only_write_needs_confirmation(ws: Workspace) -> None:
    assert {t.name: t.read_only for t in file_tools(ws)} == {
        "list_files": True, "read_file": True, "write_file": False, "search_files": True}


async def test_search_by_name(ws: Workspace) -> None:
    result = await SearchFilesTool(ws).run({"name": "*.MD"})
    assert "docs/plan.md" in result.text and "notes.txt" not in result.text


async def test_search_by_content_is_case_insensitive_and_shows_the_line(ws: Workspace) -> None:
    result = await SearchFilesTool(ws).run({"content": "budget"})
    assert "docs/plan.md: line 3: Call Alice about the budget." in result.text
    assert "notes.txt: line 2" in result.text


async def test_search_by_name_and_content(ws: Workspace) -> None:
    result = await SearchFilesTool(ws).run({"name": "*.txt", "content": "budget"})
    assert "notes.txt" in result.text and "plan.md" not in result.text


async def test_search_without_criteria_is_an_argument_error(ws: Workspace) -> None:
    with pytest.raises(ToolArgumentError, match="needs 'name'"):
        await SearchFilesTool(ws).run({})


async def test_search_with_no_hits_says_so(ws: Workspace) -> None:
    result = await SearchFilesTool(ws).run({"content": "zebra"})
    assert result.ok and "No files match" in result.text


@pytest.mark.skipif(os.name == "nt", reason="symlinks need privileges on Windows")
async def test_search_and_list_never_show_content_behind_outward_links(ws: Workspace,
                                                                      tmp_path: Path) -> None:
    (ws.root / "innocent.txt").symlink_to(tmp_path / "outside" / "secret.txt")
    (ws.root / "linked").symlink_to(tmp_path / "outside", target_is_directory=True)
    found = await SearchFilesTool(ws).run({"content": "TOP-SECRET"})
    assert "No files match" in found.text
    listed = await ListFilesTool(ws).run({"recursive": True})
    assert "innocent.txt" not in listed.text and "secret" not in listed.text


def test_schemas_reject_bad_arguments(ws: Workspace) -> None:
    with pytest.raises(ToolArgumentError):
        ReadFileTool(ws).validate({"path": 3})
    with pytest.raises(ToolArgumentError):
        WriteFileTool(ws).validate({"path": "a.txt"})  # no content
    with pytest.raises(ToolArgumentError):
        ReadFileTool(ws).validate({"path": "a", "max_chars": 0})


async def test_read_csv_adds_exact_column_totals(ws: Workspace) -> None:
    (ws.root / "spend.csv").write_text(
        "date,item,amount\n2026-11-02,Groceries,54.20\n2026-11-03,Bus,2.80\n"
        "2026-11-05,Coffee,3.60\n2026-11-08,Books,\"1,023.99\"\n", encoding="utf-8")
    result = await ReadFileTool(ws).run({"path": "spend.csv"})
    assert "4 data rows" in result.text
    # 54.20 + 2.80 + 3.60 + 1023.99, exact (a float sum would print 1084.5900000000001).
    assert "Column 'amount': total 1084.59," in result.text
    assert "Column 'item'" not in result.text  # text columns get no numbers
    assert "Column 'date'" not in result.text  # dates are not numbers


async def test_read_markdown_list_counts_items(ws: Workspace) -> None:
    (ws.root / "todo.md").write_text(
        "# Todo\n\n- Call the plumber\n- [ ] Renew passport\n* Buy a gift\n1. Book dentist\n"
        "\nSome prose - not an item.\n", encoding="utf-8")
    result = await ReadFileTool(ws).run({"path": "todo.md"})
    assert result.text.endswith("[Counted by the tool: 4 list items.]")


async def test_read_continuation_gets_no_facts(ws: Workspace) -> None:
    (ws.root / "t.csv").write_text("a,b\n1,2\n3,4\n", encoding="utf-8")
    result = await ReadFileTool(ws).run({"path": "t.csv", "offset": 4})
    assert "Counted" not in result.text


async def test_read_of_a_folder_lists_it_with_previews(ws: Workspace) -> None:
    (ws.root / "supplier.txt").write_text("Greenleaf\nInvoice #4471 is due on 15 December.\n",
                                          encoding="utf-8")
    (ws.root / "blob.txt").write_bytes(b"\x00\x01binary")
    result = await ReadFileTool(ws).run({"path": "."})
    assert result.ok and "is a folder" in result.text
    line = next(ln for ln in result.text.splitlines() if ln.startswith("supplier.txt"))
    assert line.endswith("— Greenleaf Invoice #4471 is due on 15 December.")
    blob = next(ln for ln in result.text.splitlines() if ln.startswith("blob.txt"))
    assert "—" not in blob
