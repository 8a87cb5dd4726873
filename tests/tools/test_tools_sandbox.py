"""The workspace sandbox refuses every way out: '..', absolute paths, symlinks (file or parent)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from tools_helpers import make_workspace

from desktop_app.core.errors import SandboxViolationError, ToolError
from desktop_app.core.tools.sandbox import Workspace

symlinks = pytest.mark.skipif(os.name == "nt", reason="symlinks need privileges on Windows")


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    return Workspace(make_workspace(tmp_path))


def test_relative_path_resolves_inside(ws: Workspace) -> None:
    assert ws.resolve("docs/plan.md") == ws.root / "docs" / "plan.md"
    assert ws.resolve(".") == ws.root
    assert ws.resolve("") == ws.root


@pytest.mark.parametrize("path", ["../outside/secret.txt", "docs/../../outside/secret.txt",
                                  "..", "docs/..", "..\\outside\\secret.txt"])
def test_dotdot_is_refused(ws: Workspace, path: str) -> None:
    with pytest.raises(SandboxViolationError, match=r"'\.\.' would leave the workspace"):
        ws.resolve(path)


@pytest.mark.parametrize("path", ["/etc/passwd", "~/secret.txt", "C:\\Windows\\win.ini", "//server/share"])
def test_absolute_paths_are_refused(ws: Workspace, path: str) -> None:
    with pytest.raises(SandboxViolationError, match="absolute paths are not allowed"):
        ws.resolve(path)


def test_absolute_path_to_a_file_inside_is_refused_too(ws: Workspace) -> None:
    # Even pointing inside, an absolute path is not accepted: the model works with relative paths.
    with pytest.raises(SandboxViolationError):
        ws.resolve(str(ws.root / "notes.txt"))


@symlinks
def test_symlink_inside_workspace_pointing_outside_is_refused(ws: Workspace, tmp_path: Path) -> None:
    (ws.root / "innocent.txt").symlink_to(tmp_path / "outside" / "secret.txt")
    with pytest.raises(SandboxViolationError, match="outside the workspace"):
        ws.resolve("innocent.txt")
    with pytest.raises(SandboxViolationError):
        ws.read_text("innocent.txt")


@symlinks
def test_symlinked_parent_folder_pointing_outside_is_refused(ws: Workspace, tmp_path: Path) -> None:
    (ws.root / "linked").symlink_to(tmp_path / "outside", target_is_directory=True)
    with pytest.raises(SandboxViolationError):
        ws.resolve("linked/secret.txt")
    # Writing a *new* file through the symlinked folder is refused as well.
    with pytest.raises(SandboxViolationError):
        ws.write_text("linked/new.txt", "x")
    assert not (tmp_path / "outside" / "new.txt").exists()


@symlinks
def test_dangling_symlink_to_outside_cannot_be_written_through(ws: Workspace, tmp_path: Path) -> None:
    target = tmp_path / "outside" / "created-by-link.txt"
    (ws.root / "trap.txt").symlink_to(target)
    with pytest.raises(SandboxViolationError):
        ws.write_text("trap.txt", "escaped")
    assert not target.exists()


@symlinks
def test_symlink_staying_inside_is_allowed(ws: Workspace) -> None:
    (ws.root / "alias.md").symlink_to(ws.root / "docs" / "plan.md")
    text, _ = ws.read_text("alias.md")
    assert text.startswith("# Plan")


@symlinks
def test_workspace_given_through_a_symlink_still_works(tmp_path: Path) -> None:
    real = make_workspace(tmp_path)
    link = tmp_path / "ws-link"
    link.symlink_to(real, target_is_directory=True)
    ws = Workspace(link)
    assert ws.root == real.resolve()
    assert ws.read_text("notes.txt")[0].startswith("first line")


@symlinks
def test_walk_skips_links_leading_outside(ws: Workspace, tmp_path: Path) -> None:
    (ws.root / "innocent.txt").symlink_to(tmp_path / "outside" / "secret.txt")
    (ws.root / "linked").symlink_to(tmp_path / "outside", target_is_directory=True)
    names = {p.name for p in ws.walk()}
    assert "innocent.txt" not in names and "secret.txt" not in names
    assert {"plan.md", "notes.txt"} <= names


def test_missing_file_is_a_clear_error(ws: Workspace) -> None:
    with pytest.raises(ToolError, match="does not exist in the workspace"):
        ws.resolve("nope.txt")


def test_nul_byte_is_refused(ws: Workspace) -> None:
    with pytest.raises(SandboxViolationError):
        ws.resolve("notes.txt\x00.png")


def test_read_is_limited_in_size(ws: Workspace) -> None:
    (ws.root / "big.txt").write_text("x" * 5000)
    text, cut = ws.read_text("big.txt", max_bytes=1000)
    assert len(text) == 1000 and cut


def test_binary_files_are_not_read_as_text(ws: Workspace) -> None:
    (ws.root / "blob.bin").write_bytes(b"\x00\x01\x02" * 10)
    with pytest.raises(ToolError, match="binary"):
        ws.read_text("blob.bin")


def test_missing_workspace_folder_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ToolError, match="does not exist"):
        Workspace(tmp_path / "gone")
