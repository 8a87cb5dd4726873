"""``run_python``: runs Python code in a separate, limited process. Off by default.

Layers, from the kernel up (each works without the next):

1. **Process limits** (POSIX, applied in ``preexec_fn`` before the interpreter starts):
   ``RLIMIT_AS`` (memory), ``RLIMIT_CPU`` (a CPU-time backstop), ``RLIMIT_FSIZE`` (no
   runaway files), ``RLIMIT_CORE`` 0. A wall-clock timeout kills the whole process group.
2. **No network**: on Linux the child is moved into a fresh network namespace
   (``unshare(CLONE_NEWNET)``; unprivileged users get a user namespace mapping their own
   uid first) — it has no interfaces but a downed loopback, so nothing is reachable.
3. **Audit hook** (``code_guard.py``, PEP 578): refuses sockets, writing outside the
   workspace, reading outside the workspace and the Python installation, starting programs
   and ctypes.
4. **Environment**: ``python -I`` (isolated: no user site, no PYTHON* variables), the
   workspace as working directory, HOME and TMPDIR in a scratch folder inside the
   workspace that is removed after the run, and a minimal ``PATH``.

The tool changes files, so it is ``read_only=False`` and the user confirms each run.
"""

from __future__ import annotations

import asyncio
import ctypes
import os
import shutil
import signal
import sys
import time
import uuid
from pathlib import Path
from typing import Any

from desktop_app.core.tools.base import Tool, ToolResult
from desktop_app.core.tools.sandbox import Workspace

try:  # POSIX only; imported here because importing in the forked child could deadlock
    import resource
except ImportError:  # Windows: only the timeout and the audit hook apply
    resource = None  # type: ignore[assignment]

GUARD = Path(__file__).with_name("code_guard.py")
DEFAULT_TIMEOUT = 20.0
MAX_TIMEOUT = 120.0
DEFAULT_MEMORY_MB = 512
MAX_OUTPUT_CHARS = 20_000
MAX_FILE_BYTES = 100 * 1024 * 1024
SCRATCH = ".python-tmp"

_CLONE_NEWNET = 0x40000000
_CLONE_NEWUSER = 0x10000000


def _libc_unshare() -> Any:
    """``unshare`` from libc, loaded in the parent (the child after fork only calls it)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL(None, use_errno=True).unshare
    except (OSError, AttributeError):
        return None


_UNSHARE = _libc_unshare()


def _write_proc(path: str, text: str) -> None:
    fd = os.open(path, os.O_WRONLY)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)


def _isolate_network() -> None:
    """Put the calling process into a new, empty network namespace if the kernel allows.

    Python 3.11 has no ``os.unshare`` (3.12+), hence libc through ctypes. Failure is not
    fatal: the audit hook still refuses sockets.
    """
    unshare = getattr(os, "unshare", None)
    flag_net = getattr(os, "CLONE_NEWNET", _CLONE_NEWNET)
    try:
        if unshare is not None:
            unshare(flag_net)
            return
        if _UNSHARE is not None and _UNSHARE(flag_net) == 0:
            return
    except OSError:
        pass
    if _UNSHARE is None:
        return
    uid, gid = os.getuid(), os.getgid()
    if _UNSHARE(_CLONE_NEWUSER | _CLONE_NEWNET) == 0:
        # Map our own uid/gid so files created in the workspace keep the user as owner.
        try:
            _write_proc("/proc/self/setgroups", "deny")
            _write_proc("/proc/self/uid_map", f"{uid} {uid} 1")
            _write_proc("/proc/self/gid_map", f"{gid} {gid} 1")
        except OSError:
            pass


def _limits(memory_bytes: int, cpu_seconds: int) -> Any:
    """The ``preexec_fn``: runs in the child between fork and exec."""
    def apply() -> None:
        assert resource is not None
        resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))
        resource.setrlimit(resource.RLIMIT_CPU, (cpu_seconds, cpu_seconds + 1))
        resource.setrlimit(resource.RLIMIT_FSIZE, (MAX_FILE_BYTES, MAX_FILE_BYTES))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        _isolate_network()
    return apply


def _netns_inode() -> str:
    try:
        return str(os.stat("/proc/self/ns/net").st_ino)
    except OSError:
        return ""


async def _read_capped(stream: asyncio.StreamReader, limit: int) -> tuple[str, bool]:
    """Read a pipe to the end, keeping at most ``limit`` bytes (the rest is drained)."""
    kept = bytearray()
    cut = False
    while chunk := await stream.read(65536):
        room = limit - len(kept)
        if room > 0:
            kept += chunk[:room]
        if len(chunk) > room:
            cut = True
    return kept.decode("utf-8", errors="replace"), cut


class PythonCodeTool(Tool):
    """Runs a Python program in a limited child process with the workspace as its folder."""

    name = "run_python"
    description = "Run Python code (no network, workspace only, time/memory limits)"
    read_only = False
    parameters: dict[str, Any] = {
        "type": "object",
        "properties": {
            "code": {"type": "string", "minLength": 1,
                     "description": "A complete Python program; print() what you need to see."},
            "timeout": {"type": "number", "exclusiveMinimum": 0, "maximum": MAX_TIMEOUT,
                        "description": f"Seconds before it is stopped "
                                       f"(default {DEFAULT_TIMEOUT:.0f})."},
        },
        "required": ["code"],
        "additionalProperties": False,
    }

    def __init__(self, workspace: Workspace, *, timeout: float = DEFAULT_TIMEOUT,
                 memory_mb: int = DEFAULT_MEMORY_MB, python: str | None = None,
                 max_output_chars: int = MAX_OUTPUT_CHARS) -> None:
        self.workspace = workspace
        self.timeout = timeout
        self.memory_mb = memory_mb
        self.python = python or sys.executable
        self.max_output_chars = max_output_chars

    def _env(self, scratch: Path) -> dict[str, str]:
        env = {"PATH": "/usr/bin:/bin", "HOME": str(scratch), "TMPDIR": str(scratch),
               "TEMP": str(scratch), "TMP": str(scratch), "LANG": "C.UTF-8",
               "MPLCONFIGDIR": str(scratch), "MPLBACKEND": "Agg"}
        if sys.platform == "win32":  # Windows needs these to start an interpreter at all
            env.update({k: os.environ[k] for k in ("SYSTEMROOT", "PATH") if k in os.environ})
        return env

    async def run(self, args: dict[str, Any]) -> ToolResult:
        timeout = float(args.get("timeout") or self.timeout)
        root = self.workspace.root
        # One scratch folder per run: parallel runs must not delete each other's files.
        scratch = root / f"{SCRATCH}-{uuid.uuid4().hex[:8]}"
        scratch.mkdir()
        posix = os.name == "posix"
        started = time.monotonic()
        try:
            proc = await asyncio.create_subprocess_exec(
                self.python, "-I", "-B", "-X", "utf8", str(GUARD), str(root), _netns_inode(),
                stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE, cwd=str(root), env=self._env(scratch),
                start_new_session=posix,
                preexec_fn=(_limits(self.memory_mb * 1024 * 1024, int(timeout) + 2)
                            if resource is not None else None))
        except OSError as exc:
            shutil.rmtree(scratch, ignore_errors=True)
            return ToolResult.failure(f"Python could not be started ({exc}).")
        timed_out = False
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        limit = self.max_output_chars * 4  # bytes; decoded text is cut to chars below
        readers = asyncio.gather(_read_capped(proc.stdout, limit), _read_capped(proc.stderr, limit))
        try:
            proc.stdin.write(args["code"].encode("utf-8"))
            await proc.stdin.drain()
            proc.stdin.close()
            await asyncio.wait_for(proc.wait(), timeout)
        except TimeoutError:
            timed_out = True
        except (BrokenPipeError, ConnectionResetError):
            pass  # the child died before reading its code; its stderr says why
        finally:
            if proc.returncode is None:
                self._kill(proc, posix)
                await proc.wait()
            shutil.rmtree(scratch, ignore_errors=True)
        (out, out_cut), (err, err_cut) = await readers
        elapsed = time.monotonic() - started
        return self._result(proc.returncode, out, err, out_cut or err_cut, timed_out, timeout,
                            elapsed)

    @staticmethod
    def _kill(proc: asyncio.subprocess.Process, posix: bool) -> None:
        try:
            if posix:
                os.killpg(proc.pid, signal.SIGKILL)  # the whole group: no orphaned grandchildren
            else:
                proc.kill()
        except ProcessLookupError:
            pass

    def _result(self, code: int | None, out: str, err: str, cut: bool, timed_out: bool,
                timeout: float, elapsed: float) -> ToolResult:
        def clip(text: str) -> str:
            return text if len(text) <= self.max_output_chars else (
                text[: self.max_output_chars] + "\n[... output cut ...]")
        parts = []
        if out:
            parts.append(f"stdout:\n{clip(out.rstrip())}")
        if err:
            parts.append(f"stderr:\n{clip(err.rstrip())}")
        if cut:
            parts.append(f"[Output was longer than {self.max_output_chars:,} characters and "
                         f"was cut.]")
        body = "\n\n".join(parts) or "(no output)"
        # On failure the output goes into ``error`` only: the engine shows the model both
        # fields, and the traceback once is enough.
        if timed_out:
            return ToolResult.failure(f"The program was stopped after the {timeout:g} s time "
                                      f"limit.\n{body}")
        cpu_signals = {getattr(signal, "SIGXCPU", -1), getattr(signal, "SIGKILL", -1)}
        if code is not None and code < 0 and -code in cpu_signals:
            return ToolResult.failure(f"The program was stopped by the CPU-time limit.\n{body}")
        if "MemoryError" in err:
            return ToolResult.failure(f"The program ran out of memory (limit {self.memory_mb} "
                                      f"MB).\n{body}")
        if code:
            return ToolResult.failure(f"The program failed (exit code {code}).\n{body}")
        return ToolResult(text=f"Finished in {elapsed:.1f} s.\n{body}")
