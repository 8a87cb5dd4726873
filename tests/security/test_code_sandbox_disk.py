"""The code tool's per-call disk budget and what the sandbox shows of the host.

Attacks seen: 720 MiB written to the workspace in 1.9 s (RLIMIT_FSIZE caps each file, not
their sum); ``/proc/self/mountinfo`` named the workspace's host path.
"""

from __future__ import annotations

import asyncio
import sys
import threading
from pathlib import Path

import pytest

from desktop_app.core.sandbox import DiskBudget, sandbox_status
from desktop_app.core.sandbox.disk_quota import measure
from desktop_app.core.tools.builtin.code import PythonCodeTool
from desktop_app.core.tools.sandbox import Workspace

pytestmark = [pytest.mark.anyio,
              pytest.mark.skipif(not sandbox_status().available,
                                 reason=f"no OS sandbox: {sandbox_status().reason}")]

MB = 1024 * 1024
BUDGET = DiskBudget(max_bytes=32 * MB, max_files=2_000)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    folder = tmp_path / "private-name-of-alice" / "workspace"
    folder.mkdir(parents=True)
    (folder / "notes.txt").write_text("kept\n")
    return folder


@pytest.fixture
def tool(workspace: Path) -> PythonCodeTool:
    return PythonCodeTool(Workspace(workspace), timeout=30, memory_mb=256, disk=BUDGET)


def _writer(folder: str, files: int, size: int) -> str:
    return (f"import os\nfor i in range({files}):\n"
            f"    with open(os.path.join({folder!r}, f'f{{i}}'), 'wb') as f:\n"
            f"        f.write(b'x' * {size})\n"
            "print('ALL WRITTEN')")


async def test_writing_past_the_budget_to_the_workspace_is_stopped(
        tool: PythonCodeTool, workspace: Path) -> None:
    result = await tool.run({"code": _writer(".", 40, 10 * MB)})  # 400 MB
    assert not result.ok and "ALL WRITTEN" not in (result.error or "")
    assert "wrote more than 32 MB" in (result.error or ""), result.error
    grown = measure([workspace]).bytes
    # Stopped long before its 400 MB: past the budget is what the program writes between
    # two looks at the disk (every 0.1 s), which grows with the machine's load: 68 MB on
    # an idle machine, 138 MB with a model evaluation running beside the tests.
    assert grown < 200 * MB, f"{grown / MB:.0f} MB written"
    assert (workspace / "notes.txt").read_text() == "kept\n"


@pytest.mark.parametrize("folder", ["/tmp", "/dev/shm"])
async def test_writing_past_the_budget_to_tmp_is_stopped(tool: PythonCodeTool,
                                                         folder: str) -> None:
    result = await tool.run({"code": _writer(folder, 40, 10 * MB)})
    assert not result.ok and "wrote more than" in (result.error or ""), result.error


async def test_millions_of_empty_files_are_stopped(tool: PythonCodeTool,
                                                   workspace: Path) -> None:
    result = await tool.run({"code": _writer(".", 200_000, 0)})
    assert not result.ok and "wrote more than" in (result.error or ""), result.error
    assert measure([workspace]).files < 20_000


async def test_a_program_within_the_budget_runs(tool: PythonCodeTool, workspace: Path) -> None:
    result = await tool.run({"code": _writer(".", 5, 1 * MB)})
    assert result.ok and "ALL WRITTEN" in result.text, result.error
    assert (workspace / "f4").stat().st_size == MB


async def test_another_program_filling_the_same_disk_does_not_stop_it(
        tool: PythonCodeTool, tmp_path: Path) -> None:
    """The budget is the program's own writes, not the disk's free space."""
    elsewhere = tmp_path / "download"
    elsewhere.mkdir()

    def fill() -> None:
        for i in range(12):  # 96 MB beside the sandbox, while it runs
            (elsewhere / f"part{i}").write_bytes(b"y" * 8 * MB)

    code = "import time\nfor _ in range(30):\n    time.sleep(0.1)\nprint('DONE')"
    task = asyncio.ensure_future(tool.run({"code": code}))
    await asyncio.sleep(0.5)
    filler = threading.Thread(target=fill)
    filler.start()
    result = await task
    filler.join()
    assert result.ok and "DONE" in result.text, result.error


async def test_no_host_path_is_visible_inside(tool: PythonCodeTool, workspace: Path) -> None:
    code = ("import os, sys, pydantic\n"
            "print('mountinfo', os.path.exists('/proc/self/mountinfo'))\n"
            "print(os.getcwd(), sys.executable, sys.prefix, sys.path, dict(os.environ))\n"
            "print(pydantic.__file__)\n"
            "for root, dirs, files in os.walk('/'):\n"
            "    if root.startswith(('/usr', '/opt')): dirs[:] = []; continue\n"
            "    print(root, files)\n"
            "    for f in files:\n"
            "        p = os.path.join(root, f)\n"
            "        if os.path.islink(p): print(p, '->', os.readlink(p))\n"
            "        elif os.path.isfile(p):\n"
            "            try: print(open(p, errors='replace').read(100_000))\n"
            "            except OSError: pass\n")
    result = await tool.run({"code": code})
    assert result.ok, result.error
    assert "mountinfo False" in result.text
    assert "/workspace" in result.text and "/pydantic/" in result.text  # the probe saw them
    for host_path in {str(workspace), "private-name-of-alice", sys.prefix, sys.base_prefix}:
        if not host_path.startswith("/usr"):
            assert host_path not in result.text, host_path


# --- what an adversarial review found (each fails on the first version of the budget) ---

async def test_writes_below_a_path_too_long_to_name_are_counted(
        tool: PythonCodeTool, workspace: Path) -> None:
    """Folders nested past PATH_MAX could not be listed by path: 671 MB went uncounted."""
    code = ("import os\nfor i in range(18):\n    os.mkdir('d'*250); os.chdir('d'*250)\n"
            "b = b'x'*(32*1024*1024-1)\nfor i in range(20):\n"
            "    with open(f'f{i}','wb') as f: f.write(b)\nprint('ALL WRITTEN')")
    result = await tool.run({"code": code})
    assert not result.ok and "wrote more than" in (result.error or ""), result.error
    assert measure([workspace]).bytes < 32 * MB + 120 * MB


async def test_fallocate_cannot_reserve_past_the_budget(tool: PythonCodeTool,
                                                        workspace: Path) -> None:
    """posix_fallocate reserved 3 GB in 3 ms, before the first check."""
    code = ("import os\nfor i in range(10):\n"
            "    fd = os.open(f'f{i}', os.O_CREAT | os.O_WRONLY)\n"
            "    os.posix_fallocate(fd, 0, 32*1024*1024); os.close(fd)\nprint('ALL WRITTEN')")
    result = await tool.run({"code": code})
    assert not result.ok and "wrote more than" in (result.error or ""), result.error
    assert measure([workspace]).bytes < 32 * MB + 120 * MB


async def test_sparse_files_give_no_credit_for_a_later_call(tool: PythonCodeTool,
                                                           workspace: Path) -> None:
    """Sparse files were counted at their length: a second call filled them (1.3 GB)."""
    make = ("for i in range(20):\n    with open(f's{i}','wb') as f: f.truncate(32*1024*1024-1)")
    assert (await tool.run({"code": make})).ok
    fill = ("b = b'x'*(32*1024*1024-1)\nfor i in range(20):\n"
            "    with open(f's{i}','r+b') as f: f.write(b)\nprint('ALL WRITTEN')")
    result = await tool.run({"code": fill})
    assert not result.ok and "wrote more than" in (result.error or ""), result.error
    assert measure([workspace]).bytes < 32 * MB + 120 * MB


async def test_deleted_files_held_open_are_counted(tool: PythonCodeTool) -> None:
    """Files deleted but kept open took 1.3 GB of the disk while the program ran."""
    code = ("import os, time\nb = b'x'*(32*1024*1024-1); keep = []\nfor i in range(20):\n"
            "    f = open(f'/tmp/u{i}', 'wb'); os.unlink(f'/tmp/u{i}'); f.write(b); f.flush()\n"
            "    keep.append(f)\n    time.sleep(0.05)\ntime.sleep(2)\nprint('ALL WRITTEN')")
    result = await tool.run({"code": code})
    assert not result.ok and "wrote more than" in (result.error or ""), result.error


async def test_the_i386_system_call_abi_is_refused(tool: PythonCodeTool) -> None:
    """int 0x80 reached a host socket and ptrace'd pid 1 past the x86-64 rules."""
    import platform

    if platform.machine() != "x86_64":
        pytest.skip("an x86-64 attack")
    code = ("import ctypes, mmap\n"
            "code = bytes.fromhex('53' '89f8' '89f3' '4189d0' '89ca' '4489c1' 'cd80' '5b' 'c3')\n"
            "m = mmap.mmap(-1, 4096, prot=mmap.PROT_READ|mmap.PROT_WRITE|mmap.PROT_EXEC)\n"
            "m.write(code)\n"
            "sys32 = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_int, ctypes.c_uint, ctypes.c_uint,"
            " ctypes.c_uint)(ctypes.addressof(ctypes.c_char.from_buffer(m)))\n"
            "print('socket', sys32(359, 1, 1, 0))\n"
            "print('ptrace', sys32(26, 16, 1, 0))\n"
            "print('getpid', sys32(20, 0, 0, 0))\n")
    result = await tool.run({"code": code})
    assert result.ok, result.error
    lines = {line.split()[0]: int(line.split()[1]) for line in result.text.splitlines()
             if line.startswith(("socket", "ptrace", "getpid"))}
    assert lines == {"socket": -1, "ptrace": -1, "getpid": -1}, result.text
