"""Attacks on the file tools: FIFOs, sockets, symlink swaps, hard links.

The tools must only ever touch regular files inside the workspace, never block, and never
follow a symlink swapped in between the path check and the open.
"""

from __future__ import annotations

import asyncio
import os
import socket
import threading
import time
from pathlib import Path

import pytest

from desktop_app.core.errors import ToolError
from desktop_app.core.tools.builtin.files import file_tools
from desktop_app.core.tools.sandbox import Workspace

pytestmark = pytest.mark.skipif(os.name != "posix", reason="POSIX file semantics")
SECRET = "TOP-SECRET outside the workspace"


@pytest.fixture
def setup(tmp_path: Path) -> tuple[Workspace, Path]:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "ok.txt").write_text("fine\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text(SECRET)
    return Workspace(root), outside


def _tool(ws: Workspace, name: str):
    return next(t for t in file_tools(ws) if t.name == name)


def _run(ws: Workspace, name: str, **args: object):
    async def call():
        try:
            return await asyncio.wait_for(_tool(ws, name).run(dict(args)), 10)
        except ToolError as exc:
            return exc
    return asyncio.run(call())


def test_a_fifo_is_refused_at_once_not_read_forever(setup: tuple[Workspace, Path]) -> None:
    ws, _ = setup
    os.mkfifo(ws.root / "pipe.txt")
    started = time.monotonic()
    outcome = _run(ws, "read_file", path="pipe.txt")
    assert time.monotonic() - started < 5
    assert isinstance(outcome, ToolError) and "not a regular file" in str(outcome)
    write = _run(ws, "write_file", path="pipe.txt", content="x")
    assert isinstance(write, ToolError) and "not a regular file" in str(write)
    search = _run(ws, "search_files", content="fine")  # walks past the FIFO
    assert not isinstance(search, Exception) and "ok.txt" in search.text


def test_a_unix_socket_file_is_refused(setup: tuple[Workspace, Path]) -> None:
    ws, _ = setup
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(ws.root / "bus.sock"))
    try:
        outcome = _run(ws, "read_file", path="bus.sock")
        assert isinstance(outcome, ToolError)
    finally:
        server.close()


def test_a_hard_link_to_a_file_outside_is_neither_read_nor_written(
        setup: tuple[Workspace, Path]) -> None:
    ws, outside = setup
    os.link(outside / "secret.txt", ws.root / "linked.txt")
    read = _run(ws, "read_file", path="linked.txt")
    assert isinstance(read, ToolError) and "hard links" in str(read)
    write = _run(ws, "write_file", path="linked.txt", content="overwritten")
    assert isinstance(write, ToolError)
    assert (outside / "secret.txt").read_text() == SECRET  # not even truncated


def _swapper(link: Path, target_outside: Path, stop: threading.Event) -> threading.Thread:
    """Atomically flip ``link`` between a harmless regular file and a symlink outside."""
    def swap() -> None:
        real, fake = link.with_name(".real"), link.with_name(".fake")
        while not stop.is_set():
            real.write_text("harmless")
            os.replace(real, link)
            fake.unlink(missing_ok=True)
            fake.symlink_to(target_outside)
            os.replace(fake, link)
    thread = threading.Thread(target=swap, daemon=True)
    thread.start()
    return thread


def test_a_symlink_swapped_in_while_reading_is_never_followed(
        setup: tuple[Workspace, Path]) -> None:
    ws, outside = setup
    link = ws.root / "swap.txt"
    stop = threading.Event()
    thread = _swapper(link, outside / "secret.txt", stop)
    leaks = reads = 0
    try:
        for _ in range(2000):
            try:
                text, _ = ws.read_text("swap.txt")
            except ToolError:
                continue
            reads += 1
            leaks += SECRET in text
    finally:
        stop.set()
        thread.join()
    assert reads > 50  # the race was really run, not refused every time
    assert leaks == 0, f"{leaks} of {reads} reads followed the swapped-in symlink"


def test_a_parent_folder_swapped_for_a_symlink_while_writing_never_writes_outside(
        setup: tuple[Workspace, Path]) -> None:
    ws, outside = setup
    folder = ws.root / "sub"
    stop = threading.Event()

    def swap() -> None:
        while not stop.is_set():
            try:
                if folder.is_symlink():
                    folder.unlink()
                    folder.mkdir()
                else:
                    for child in folder.iterdir():
                        child.unlink()
                    folder.rmdir()
                    folder.symlink_to(outside)
            except OSError:
                pass

    thread = threading.Thread(target=swap, daemon=True)
    thread.start()
    try:
        for number in range(1000):
            try:
                ws.write_text(f"sub/file{number}.txt", "x")
            except (ToolError, OSError):
                continue
    finally:
        stop.set()
        thread.join()
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]
