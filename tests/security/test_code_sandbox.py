"""Attacks on the Python code tool's OS sandbox, written as an attacker would try them.

Each test runs hostile code through the real tool (bubblewrap on Linux) and checks on the
host that nothing escaped: no file outside the workspace read or changed, no key from the
app's environment, no network (TCP, abstract UNIX sockets), no process left behind.
"""

from __future__ import annotations

import asyncio
import os
import socket
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from desktop_app.core.sandbox import sandbox_status
from desktop_app.core.tools.builtin.code import PythonCodeTool
from desktop_app.core.tools.sandbox import Workspace

pytestmark = [pytest.mark.anyio,
              pytest.mark.skipif(not sandbox_status().available,
                                 reason=f"no OS sandbox: {sandbox_status().reason}")]

SECRET = "SECRET-" + uuid.uuid4().hex
ENV_KEY = "sk-test-" + uuid.uuid4().hex


@pytest.fixture
def victim(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, Path]]:
    """A workspace, and beside it what an attacker wants: an SSH key, a private folder."""
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_ed25519").write_text(SECRET)
    private = tmp_path / "private"
    private.mkdir()
    (private / "diary.txt").write_text(SECRET)
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    (workspace / "data.csv").write_text("a,b\n1,2\n")
    # The app's own environment holds a key (as it may with OPENAI_API_KEY set).
    monkeypatch.setenv("OPENAI_API_KEY", ENV_KEY)
    yield {"home": home, "private": private, "workspace": workspace}
    for path in (home / ".ssh" / "id_ed25519", private / "diary.txt"):
        assert path.read_text() == SECRET, f"{path} was changed"


@pytest.fixture
def tool(victim: dict[str, Path]) -> PythonCodeTool:
    tool = PythonCodeTool(Workspace(victim["workspace"]), timeout=8, memory_mb=256)
    # Positive control: an attack "fails" trivially if nothing can run in the sandbox at
    # all (a CI clone with its venv under /tmp once hid Python that way).
    alive = asyncio.run(tool.run({"code": "print('alive', 6 * 7)"}))
    assert alive.ok and "alive 42" in alive.text, alive.error
    return tool


def _leaked(result_text: str) -> bool:
    return SECRET in result_text or ENV_KEY in result_text


READ_ATTACKS = {
    "open by absolute path": "print(open({key!r}).read())",
    "os.open with dir_fd": ("import os\nfd = os.open('/', os.O_RDONLY)\n"
                            "print(os.read(os.open({key_rel!r}, os.O_RDONLY, dir_fd=fd), 999))"),
    "walk the file system": ("import os\nfor root, dirs, files in os.walk('/'):\n"
                             "    if root.startswith(('/proc', '/sys', '/dev')): continue\n"
                             "    for f in files:\n"
                             "        try: print(open(os.path.join(root, f), errors='ignore')"
                             ".read(200))\n"
                             "        except Exception: pass"),
    "_posixsubprocess": ("import _posixsubprocess, os\nr, w = os.pipe()\n"
                         "pid = _posixsubprocess.fork_exec(['/bin/cat', {key!r}], [b'/bin/cat'],"
                         " True, (), None, None, -1, -1, -1, w, -1, -1, r, w, True, False,"
                         " False, None, None, None, -1, None, False)\n"
                         "os.waitpid(pid, 0)"),
    "ctypes system()": ("import ctypes\nctypes.CDLL(None).system(b'cat {key} {diary}; "
                        "cat /proc/*/environ | tr \"\\\\0\" \"\\\\n\" | grep sk-test')"),
    "os.system shell": "import os\nos.system('cat {key}; env; cat /proc/1/environ')",
    "subprocess through /proc/self/root": (
        "import subprocess\nprint(subprocess.run(['cat', '/proc/self/root' + {key!r}],"
        " capture_output=True, text=True))"),
    "the environment": "import os\nprint(dict(os.environ))",
    "every /proc environ": ("import glob\nfor p in glob.glob('/proc/*/environ'):\n"
                            "    try: print(open(p, 'rb').read())\n"
                            "    except Exception as e: print(p, e)"),
    "the parent's environ by pid": "print(open('/proc/{host_pid}/environ', 'rb').read())",
    "a hard link to the key": ("import os\nos.link({key!r}, 'stolen')\n"
                               "print(open('stolen').read())"),
    "a symlink to the key": ("import os\nos.symlink({key!r}, 'stolen')\n"
                             "print(open('stolen').read())"),
}


@pytest.mark.parametrize("attack", sorted(READ_ATTACKS))
async def test_files_and_keys_outside_the_workspace_cannot_be_read(
        attack: str, tool: PythonCodeTool, victim: dict[str, Path]) -> None:
    key = victim["home"] / ".ssh" / "id_ed25519"
    code = READ_ATTACKS[attack].format(key=str(key), key_rel=str(key).lstrip("/"),
                                       diary=str(victim["private"] / "diary.txt"),
                                       host_pid=os.getpid())
    result = await tool.run({"code": code})
    assert not _leaked(result.text + (result.error or "")), attack


WRITE_ATTACKS = {
    "overwrite by path": "open({diary!r}, 'w').write('pwned')",
    "delete by path": "import os\nos.remove({diary!r})",
    "python installation": ("import os, sys\n"
                            "open(os.path.join(sys.prefix, 'pwned.txt'), 'w').write('x')"),
    "rename into the workspace": "import os\nos.rename({diary!r}, 'diary.txt')",
    "shell redirect": "import os\nos.system('echo pwned > {diary}; rm -rf {private}')",
}


@pytest.mark.parametrize("attack", sorted(WRITE_ATTACKS))
async def test_nothing_outside_the_workspace_can_be_changed(
        attack: str, tool: PythonCodeTool, victim: dict[str, Path]) -> None:
    import sys

    code = WRITE_ATTACKS[attack].format(diary=str(victim["private"] / "diary.txt"),
                                        private=str(victim["private"]))
    await tool.run({"code": code})
    assert (victim["private"] / "diary.txt").read_text() == SECRET
    assert not (Path(sys.prefix) / "pwned.txt").exists()


async def test_the_workspace_itself_is_writable(tool: PythonCodeTool,
                                                victim: dict[str, Path]) -> None:
    result = await tool.run({"code": "open('out.txt', 'w').write(open('data.csv').read())"})
    assert result.ok, result.error
    assert (victim["workspace"] / "out.txt").read_text() == "a,b\n1,2\n"


async def test_no_network_not_even_loopback_or_abstract_unix_sockets(
        tool: PythonCodeTool) -> None:
    tcp = socket.socket()
    tcp.bind(("127.0.0.1", 0))
    tcp.listen()
    tcp.setblocking(False)
    name = "\0desktop-app-test-" + uuid.uuid4().hex  # abstract: no file to hide
    unix = socket.socket(socket.AF_UNIX)
    unix.bind(name)
    unix.listen()
    unix.setblocking(False)
    code = (f"import socket\nfor family, addr in ((socket.AF_INET, ('127.0.0.1', "
            f"{tcp.getsockname()[1]})), (socket.AF_UNIX, {name!r}), "
            f"(socket.AF_INET, ('1.1.1.1', 53))):\n"
            "    try:\n        s = socket.socket(family)\n        s.settimeout(2)\n"
            "        s.connect(addr); print('CONNECTED', addr)\n"
            "    except OSError as e: print('refused', e)")
    try:
        result = await tool.run({"code": code})
        assert result.ok and "CONNECTED" not in result.text and "refused" in result.text
        for server in (tcp, unix):
            with pytest.raises(BlockingIOError):
                server.accept()
    finally:
        tcp.close()
        unix.close()


async def test_no_session_bus_or_keyring_socket(tool: PythonCodeTool) -> None:
    code = ("import os\nprint('bus' if 'DBUS_SESSION_BUS_ADDRESS' in os.environ else 'nobus')\n"
            "print('run' if os.path.exists('/run/user') or os.path.exists('/run/dbus') "
            "else 'norun')\nprint(sorted(os.listdir('/')))")
    result = await tool.run({"code": code})
    assert result.ok and "nobus" in result.text and "norun" in result.text
    assert "home" not in result.text.split("\n")[-1]


async def test_host_processes_cannot_be_signalled(tool: PythonCodeTool) -> None:
    result = await tool.run({"code": f"import os\nos.kill({os.getpid()}, 9)"})
    assert result.error and "ProcessLookupError" in result.error  # not even visible


def _pids_cgroup_available() -> bool:
    """Whether this machine lets a call have its own pids cgroup (tried, then removed)."""
    from desktop_app.core.sandbox import PidsCgroup

    probe = PidsCgroup.create(8)
    if probe is None:
        return False
    probe.remove()
    return True


def _host_processes_with(marker: str) -> list[str]:
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if marker in cmdline:
            found.append(f"{pid}: {cmdline}")
    return found


@pytest.mark.parametrize("escape", ["fork", "setsid", "double fork", "fork bomb"])
async def test_nothing_outlives_the_call(escape: str, tool: PythonCodeTool) -> None:
    marker = f"{1000 + int(uuid.uuid4().int % 1000)}.{uuid.uuid4().int % 10**6}"
    sleeper = f"os.execv('/bin/sleep', ['sleep', '{marker}'])"
    code = {
        "fork": f"import os\nif os.fork() == 0:\n    {sleeper}\nprint('parent done')",
        "setsid": f"import os\nif os.fork() == 0:\n    os.setsid()\n    {sleeper}\n",
        "double fork": (f"import os\nif os.fork() == 0:\n    if os.fork() == 0:\n"
                        f"        os.setsid()\n        {sleeper}\n    os._exit(0)\n"),
        "fork bomb": (f"import os\nif os.fork() == 0:\n    {sleeper}\n"
                      "while True:\n    try: os.fork()\n    except OSError: pass"),
    }[escape]
    started = time.monotonic()
    result = await tool.run({"code": code, "timeout": 3})
    # A pids cgroup (or, without one, RLIMIT_NPROC for a normal user) stops a fork bomb at
    # once; only root without a writable pids hierarchy relies on the PID namespace's
    # teardown, which has to reap thousands of processes.
    slow = escape == "fork bomb" and not _pids_cgroup_available() and os.getuid() == 0
    assert time.monotonic() - started < (120 if slow else 20), result.error
    deadline = time.monotonic() + 5
    while _host_processes_with(marker) and time.monotonic() < deadline:
        await asyncio.sleep(0.1)
    assert not _host_processes_with(marker)


async def test_memory_and_file_size_are_limited(tool: PythonCodeTool,
                                                victim: dict[str, Path]) -> None:
    memory = await tool.run({"code": "b = bytearray(2 * 1024**3)\nprint('allocated')"})
    assert memory.error and "allocated" not in memory.error
    huge = await tool.run({"code": "f = open('big', 'wb')\nfor _ in range(200):\n"
                                   "    f.write(b'x' * 1024 * 1024)\nprint('written')"})
    assert huge.error and "written" not in huge.error
    assert (victim["workspace"] / "big").stat().st_size <= 100 * 1024 * 1024


async def test_a_fork_bomb_hits_the_process_limit_at_once(tool: PythonCodeTool) -> None:
    if not _pids_cgroup_available() and os.getuid() == 0:
        pytest.skip("root without a writable pids cgroup: only the time limit applies")
    code = ("import os\ncount = 0\nwhile True:\n    try:\n        pid = os.fork()\n"
            "    except OSError as exc:\n        print('refused after', count, exc.errno, "
            "flush=True)\n        break\n    if pid == 0:\n        import time\n"
            "        time.sleep(30)\n        os._exit(0)\n    count += 1\n")
    started = time.monotonic()
    result = await tool.run({"code": code, "timeout": 15})
    assert time.monotonic() - started < 10, result.error
    assert result.ok and "refused after" in result.text, result.error
    count = int(result.text.split("refused after")[1].split()[0])
    assert count < 100  # Limits.processes is 64


async def test_capabilities_and_mounts_are_gone(tool: PythonCodeTool) -> None:
    code = ("import ctypes, os\nlibc = ctypes.CDLL(None, use_errno=True)\n"
            "head = (ctypes.c_uint32 * 2)(0x20080522, 0)\n"  # capget, version 3, this process
            "data = (ctypes.c_uint32 * 6)()\n"
            "print('capget', libc.capget(head, data), 'CapEff', data[0] | data[3])\n"
            "print('mount', libc.mount(b'none', b'/tmp', b'tmpfs', 0, None), "
            "ctypes.get_errno())\n"
            "print('chroot', libc.chroot(b'/tmp'))")
    result = await tool.run({"code": code})
    assert result.ok, result.error
    assert "capget 0 CapEff 0" in result.text
    assert "mount -1" in result.text and "chroot -1" in result.text


async def test_tmp_and_shm_are_on_disk_and_size_limited_and_the_rest_read_only(
        tool: PythonCodeTool) -> None:
    """tmpfs is not counted by the memory limit: 1.5 GiB of the host's memory were filled
    through /tmp and /dev/shm under a 512 MB limit."""
    probe = await tool.run({"code": (
        "import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\n"
        "def kind(path):\n"
        "    buf = ctypes.create_string_buffer(256)\n"
        "    assert libc.statfs(path.encode(), buf) == 0\n"
        "    return 'tmpfs' if ctypes.c_long.from_buffer(buf).value == 0x01021994 else 'disk'\n"
        "print(kind('/tmp'), kind('/dev/shm'))\n"
        "for path in ('/newfile', '/dev/newfile'):\n"
        "    try:\n"
        "        open(path, 'w').write('x')\n"
        "        print('WROTE', path)\n"
        "    except OSError as exc:\n"
        "        print('refused', path, exc.errno)\n")})
    assert probe.error is None, probe.error
    lines = probe.text.strip().splitlines()
    kinds = lines[lines.index("stdout:") + 1].split()
    assert len(kinds) == 2 and "tmpfs" not in kinds, probe.text  # on the scratch folder's disk
    writes = [line for line in lines if line.startswith(("refused", "WROTE"))]
    assert len(writes) == 2 and all(w.startswith("refused") for w in writes), probe.text
    for folder in ("/tmp", "/dev/shm"):
        huge = await tool.run({"code": (
            f"f = open('{folder}/big', 'wb')\nfor _ in range(200):\n"
            "    f.write(b'x' * 1024 * 1024)\nprint('written')")})
        assert huge.error and "written" not in huge.error, folder


async def test_a_unix_socket_file_in_the_workspace_leads_nowhere(
        tool: PythonCodeTool, victim: dict[str, Path]) -> None:
    """The network namespace does not cover sockets reached through the file system: a
    host process listening on a socket file in the workspace answered sandboxed code."""
    path = victim["workspace"] / "door.sock"
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path))
    server.listen()
    server.setblocking(False)
    code = ("import socket\ntry:\n    s = socket.socket(socket.AF_UNIX)\n"
            "    s.connect('door.sock'); print('CONNECTED')\n"
            "except OSError as e: print('refused', e.errno)\n"
            "a, b = socket.socketpair(); a.send(b'x'); print('pair', b.recv(1))")
    try:
        result = await tool.run({"code": code})
        assert result.ok, result.error
        assert "CONNECTED" not in result.text and "refused 1" in result.text
        assert "pair b'x'" in result.text  # socketpair (asyncio's) still works
        with pytest.raises(BlockingIOError):
            server.accept()
    finally:
        server.close()


async def test_the_sandbox_cannot_ptrace_its_own_pid_1(tool: PythonCodeTool) -> None:
    code = ("import ctypes, os\nlibc = ctypes.CDLL(None, use_errno=True)\n"
            "for pid in (1, os.getppid()):\n"
            "    r = libc.ptrace(16, pid, 0, 0)\n"  # PTRACE_ATTACH
            "    print('ptrace', pid, r, ctypes.get_errno())")
    result = await tool.run({"code": code})
    assert result.ok, result.error
    lines = [line for line in result.text.splitlines() if line.startswith("ptrace")]
    assert len(lines) == 2 and all(line.endswith(" -1 1") for line in lines), result.text
