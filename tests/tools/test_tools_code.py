"""The Python code tool: runs code in the OS sandbox; time, memory, network and file limits.

Attacks on the sandbox itself are in tests/security/test_code_sandbox.py."""

from __future__ import annotations

import asyncio
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from tools_helpers import make_workspace

from desktop_app.core.config.settings import Settings
from desktop_app.core.sandbox import sandbox_status
from desktop_app.core.tools.builtin import default_tools
from desktop_app.core.tools.builtin.code import PythonCodeTool
from desktop_app.core.tools.sandbox import Workspace

pytestmark = [pytest.mark.anyio,
              pytest.mark.skipif(not sandbox_status().available,
                                 reason=f"no OS sandbox: {sandbox_status().reason}")]


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    return Workspace(make_workspace(tmp_path))


@pytest.fixture
def tool(ws: Workspace) -> PythonCodeTool:
    return PythonCodeTool(ws, timeout=10, memory_mb=256)


@pytest.fixture
def listener() -> Iterator[socket.socket]:
    """A real loopback TCP listener the code will try (and fail) to reach."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    server.setblocking(False)
    yield server
    server.close()


async def test_runs_code_and_returns_its_output(tool: PythonCodeTool) -> None:
    result = await tool.run({"code": "import math\nprint(math.factorial(20))"})
    assert result.ok and "2432902008176640000" in result.text


async def test_working_folder_is_the_workspace(tool: PythonCodeTool, ws: Workspace) -> None:
    code = "print(open('notes.txt').read().splitlines()[0])\nopen('made.txt','w').write('ok')"
    result = await tool.run({"code": code})
    assert "first line" in result.text
    assert (ws.root / "made.txt").read_text() == "ok"


async def test_home_and_tmp_are_private_and_gone_after_the_run(tool: PythonCodeTool,
                                                               ws: Workspace) -> None:
    before = sorted(p.name for p in ws.root.iterdir())
    code = ("import os, tempfile\nprint(os.environ['HOME'])\nprint(tempfile.gettempdir())\n"
            "f = tempfile.NamedTemporaryFile(delete=False); f.write(b'x'); f.close()")
    result = await tool.run({"code": code})
    assert result.ok, result.error
    assert "/tmp\n/tmp" in result.text  # a tmpfs of the sandbox, not the user's
    assert sorted(p.name for p in ws.root.iterdir()) == before


async def test_time_limit_stops_the_program(tool: PythonCodeTool) -> None:
    started = time.monotonic()
    result = await tool.run({"code": "print('started', flush=True)\nwhile True: pass", "timeout": 1})
    assert time.monotonic() - started < 6
    assert result.error and "1 s time limit" in result.error and "started" in result.error


async def test_time_limit_also_kills_a_sleeping_program(tool: PythonCodeTool) -> None:
    started = time.monotonic()
    result = await tool.run({"code": "import time\ntime.sleep(60)", "timeout": 1})
    assert time.monotonic() - started < 6 and "time limit" in (result.error or "")


async def test_memory_limit_is_enforced(tool: PythonCodeTool) -> None:
    result = await tool.run({"code": "block = bytearray(1024 * 1024 * 1024)\nprint('allocated')"})
    assert result.error and "ran out of memory (limit 256 MB)" in result.error
    assert "allocated" not in result.error


async def test_memory_below_the_limit_works(tool: PythonCodeTool) -> None:
    result = await tool.run({"code": "block = bytearray(64 * 1024 * 1024)\nprint(len(block))"})
    assert result.ok and "67108864" in result.text


async def test_no_network_connect_to_loopback_listener_fails(tool: PythonCodeTool,
                                                           listener: socket.socket) -> None:
    port = listener.getsockname()[1]
    code = f"import socket\ns = socket.create_connection(('127.0.0.1', {port}), timeout=2)\nprint('CONNECTED')"
    result = await tool.run({"code": code})
    assert result.error and "CONNECTED" not in result.error
    with pytest.raises(BlockingIOError):
        listener.accept()  # nothing ever reached the listener


@pytest.mark.parametrize("code", [
    "open('{outside}/evil.txt', 'w').write('x')",
    "import os\nos.remove('{outside}/secret.txt')",
    "import os\nos.rename('{outside}/secret.txt', 'stolen.txt')",
    "import os\nos.symlink('{outside}/secret.txt', 'link.txt')\nopen('link.txt', 'w').write('x')",
    "import shutil\nshutil.rmtree('{outside}')",
    "import os\nos.mkdir('{outside}/newdir')",
    "import sqlite3\nsqlite3.connect('{outside}/data.db').execute('create table t (x)')",
])
async def test_writing_outside_the_workspace_is_refused(tool: PythonCodeTool, tmp_path: Path,
                                                        code: str) -> None:
    outside = tmp_path / "outside"
    result = await tool.run({"code": code.format(outside=outside)})
    # The host folder does not exist in the sandbox: nothing there can be named.
    assert result.error and ("FileNotFoundError" in result.error
                             or "OperationalError" in result.error), result.error
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]
    assert (outside / "secret.txt").read_text() == "TOP-SECRET-CONTENT budget\n"


async def test_reading_private_files_outside_is_refused(tool: PythonCodeTool, tmp_path: Path) -> None:
    result = await tool.run({"code": f"print(open('{tmp_path}/outside/secret.txt').read())"})
    assert result.error and "TOP-SECRET" not in result.error and "FileNotFoundError" in result.error
    listing = await tool.run({"code": f"import os\nprint(os.listdir('{tmp_path}/outside'))"})
    assert listing.error and "secret.txt" not in listing.error


async def test_errors_show_the_traceback(tool: PythonCodeTool) -> None:
    result = await tool.run({"code": "def f():\n    return 1 / 0\nf()"})
    assert result.error and "ZeroDivisionError" in result.error and 'File "<code>", line 2' in result.error
    syntax = await tool.run({"code": "print('unclosed"})
    assert syntax.error and "SyntaxError" in syntax.error


async def test_exit_code_is_reported(tool: PythonCodeTool) -> None:
    result = await tool.run({"code": "import sys\nsys.exit(3)"})
    assert result.error and "exit code 3" in result.error


async def test_huge_output_is_cut(ws: Workspace) -> None:
    tool = PythonCodeTool(ws, max_output_chars=1000)
    result = await tool.run({"code": "print('x' * 1_000_000)"})
    assert result.ok and len(result.text) < 1500 and "cut" in result.text


def test_code_tool_is_off_by_default_and_needs_confirmation(tmp_path: Path) -> None:
    assert "run_python" not in {t.name for t in default_tools(Settings())}
    settings = Settings()
    settings.tools.code_tool_enabled = True
    assert "run_python" not in {t.name for t in default_tools(settings)}  # no workspace yet
    settings.tools.workspace = str(make_workspace(tmp_path))
    [code_tool] = [t for t in default_tools(settings) if t.name == "run_python"]
    assert code_tool.read_only is False
    settings.tools.disabled = ["run_python"]
    assert "run_python" not in {t.name for t in default_tools(settings)}


async def test_parallel_runs_each_have_their_own_tmp(tool: PythonCodeTool, ws: Workspace) -> None:
    code = ("import os, tempfile, time\np = os.path.join(tempfile.gettempdir(), 'f')\n"
            "open(p, 'w').write('x')\ntime.sleep({delay})\nprint(open(p).read())")
    fast, slow = await asyncio.gather(tool.run({"code": code.format(delay=0)}),
                                      tool.run({"code": code.format(delay=1)}))
    assert fast.ok and slow.ok, (fast.error, slow.error)
    assert "x" in fast.text and "x" in slow.text


async def test_sqlite_in_the_workspace_and_in_memory_works(tool: PythonCodeTool, ws: Workspace) -> None:
    code = ("import sqlite3\nfor name in (':memory:', 'local.db'):\n"
            "    db = sqlite3.connect(name)\n    db.execute('create table t (x)')\n"
            "    db.execute('insert into t values (1)')\n    db.commit()\nprint('ok')")
    result = await tool.run({"code": code})
    assert result.ok, result.error
    assert (ws.root / "local.db").exists()


def test_workspace_tool_info_names_every_workspace_tool(tmp_path: Path) -> None:
    from desktop_app.core.tools.builtin.assistant import workspace_tool_info

    settings = Settings()
    settings.tools.workspace = str(make_workspace(tmp_path))
    settings.tools.code_tool_enabled = True
    active = {t.name: t.read_only for t in default_tools(settings)}
    info = {name: read_only for name, _, read_only in workspace_tool_info()}
    assert info.items() <= active.items()
    assert set(active) - set(info) == {t.name for t in default_tools(Settings())}


async def test_through_the_agent_a_failure_shows_the_traceback_once(tool: PythonCodeTool) -> None:
    from desktop_app.core.agent import ReActAgent
    from desktop_app.core.llm.testing import ScriptedLLM, tool_call_reply
    from desktop_app.core.tools.base import ToolRegistry

    llm = ScriptedLLM([tool_call_reply(("run_python", {"code": "1 / 0"})), "It failed."],
                      tool_call=True)
    result = await ReActAgent(llm, ToolRegistry([tool])).run("divide")  # no confirm: allowed
    [message] = [m for m in result.messages if m.role == "tool"]
    assert message.content.count("ZeroDivisionError") == 1
