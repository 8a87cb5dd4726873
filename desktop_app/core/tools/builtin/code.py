"""``run_python``: runs Python code the model wrote inside an OS sandbox. Off by default.

The boundary is the operating system's, not the interpreter's (an audit hook is not a
sandbox: PEP 578 says so, and an attacker showed it): ``desktop_app.core.sandbox`` runs the
interpreter under bubblewrap on Linux (namespaces for users, mounts, PIDs, network and IPC;
the workspace the only writable folder, a read-only minimal system, no home, no session bus,
a cleared environment) or ``sandbox-exec`` on macOS. Kernel limits cap memory, CPU time,
file size and process count; the wall-clock limit kills the launcher, and with it the
sandbox's PID namespace, so nothing the program started outlives the call. Where no
sandbox can start, the tool cannot be enabled (Settings says why).

The tool changes files, so it is ``read_only=False`` and the user confirms each run.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import sys
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from desktop_app.core.sandbox import (
    DiskBudget,
    DiskWatch,
    Limits,
    PidsCgroup,
    limit_process,
    python_at_own_paths,
    python_inside,
    sandbox_status,
    sandboxed_argv,
)
from desktop_app.core.sandbox.limits import MAX_FILE_BYTES
from desktop_app.core.tools.base import Tool, ToolResult
from desktop_app.core.tools.sandbox import Workspace

DEFAULT_TIMEOUT = 20.0
MAX_TIMEOUT = 120.0
DEFAULT_MEMORY_MB = 512
MAX_OUTPUT_CHARS = 20_000
#: Runs the program read from stdin as ``__main__``; "<code>" names it in tracebacks.
RUNNER = ("import sys\nsource = sys.stdin.read()\nsys.stdin = open('/dev/null')\n"
          "exec(compile(source, '<code>', 'exec'), {'__name__': '__main__'})")


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


def _seccomp_file(scratch: Path) -> int | None:
    """An open file with the sandbox's seccomp filter, for bubblewrap (Linux)."""
    from desktop_app.core.sandbox.seccomp import filter_program

    program = filter_program() if sys.platform.startswith("linux") else None
    if program is None:
        return None
    path = scratch / "seccomp.bpf"
    path.write_bytes(program)
    return os.open(path, os.O_RDONLY)


def _scratch_folder() -> str:
    """A new folder for one call's /tmp and /dev/shm, in the app's cache: on disk (the
    host's own /tmp is often a tmpfs, in memory)."""
    from desktop_app.core.paths import cache_dir

    parent = cache_dir() / "code-scratch"
    parent.mkdir(parents=True, exist_ok=True)
    return tempfile.mkdtemp(prefix="call-", dir=parent)


class PythonCodeTool(Tool):
    """Runs a Python program in a limited child process with the workspace as its folder."""

    name = "run_python"
    description = "Run Python code in a sandbox (workspace folder only, no network)"
    read_only = False
    reads_private = True  # the program sees the workspace and may print any file of it
    parameters: Mapping[str, Any] = {
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
                 memory_mb: int = DEFAULT_MEMORY_MB, disk: DiskBudget | None = None,
                 max_output_chars: int = MAX_OUTPUT_CHARS) -> None:
        self.workspace = workspace
        self.timeout = timeout
        self.memory_mb = memory_mb
        self.disk = disk or DiskBudget()
        self.max_output_chars = max_output_chars

    async def run(self, args: dict[str, Any]) -> ToolResult:
        status = sandbox_status()
        if not status.available:
            return ToolResult.failure(f"Python code cannot run here: {status.reason}")
        timeout = float(args.get("timeout") or self.timeout)
        limits = Limits(memory_mb=self.memory_mb, cpu_seconds=int(timeout) + 2,
                        file_bytes=min(MAX_FILE_BYTES, self.disk.max_bytes))
        # /tmp and /dev/shm of this call, on disk (not in memory) and gone after it.
        scratch = Path(await asyncio.to_thread(_scratch_folder))
        seccomp_fd = await asyncio.to_thread(_seccomp_file, scratch)
        python = python_inside() if status.kind == "bubblewrap" else python_at_own_paths()
        argv = sandboxed_argv([python.executable, "-I", "-B", "-X", "utf8", "-c",
                               python.runner_prelude() + RUNNER],
                              Path(self.workspace.root), scratch, seccomp_fd, python)
        disk = DiskWatch([Path(self.workspace.root), scratch], self.disk)
        await asyncio.to_thread(disk.begin)
        started = time.monotonic()
        # Counts only this call's processes, for any user (root included), where possible.
        cgroup = await asyncio.to_thread(PidsCgroup.create, limits.processes)
        try:
            return await self._run_in(argv, args, limits, timeout, started, cgroup,
                                      () if seccomp_fd is None else (seccomp_fd,), disk)
        finally:
            if seccomp_fd is not None:
                os.close(seccomp_fd)
            if cgroup is not None:
                await asyncio.to_thread(cgroup.remove)
            await asyncio.to_thread(shutil.rmtree, scratch, True)

    async def _run_in(self, argv: list[str], args: dict[str, Any], limits: Limits,
                      timeout: float, started: float,
                      cgroup: PidsCgroup | None, pass_fds: tuple[int, ...],
                      disk: DiskWatch) -> ToolResult:
        # limit_process counts the user's processes in /proc: not on the event loop (the
        # window's Qt thread).
        preexec = await asyncio.to_thread(limit_process, limits,
                                          cgroup.procs_file if cgroup else None)
        try:
            proc = await asyncio.create_subprocess_exec(
                *argv, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE, cwd=str(self.workspace.root),
                env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"},  # the launcher's: no keys
                start_new_session=True, preexec_fn=preexec, pass_fds=pass_fds)
        except OSError as exc:
            return ToolResult.failure(f"The sandbox could not be started ({exc}).")
        timed_out = False
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        limit = self.max_output_chars * 4  # bytes; decoded text is cut to chars below
        readers = asyncio.gather(_read_capped(proc.stdout, limit), _read_capped(proc.stderr, limit))
        watcher = asyncio.ensure_future(disk.watch(lambda: self._kill(proc), holder=proc.pid))
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
            watcher.cancel()
            if proc.returncode is None:
                self._kill(proc)
                await proc.wait()
        try:
            (out, out_cut), (err, err_cut) = await asyncio.wait_for(readers, 5.0)
        except TimeoutError:  # a pipe still held open: the namespace is going away anyway
            (out, out_cut), (err, err_cut) = ("", False), ("(output lost)", False)
        elapsed = time.monotonic() - started
        await asyncio.to_thread(disk.finish)  # a burst just before it ended counts too
        if disk.exceeded:
            return ToolResult.failure(f"The program was stopped: {disk.exceeded}. What it "
                                      f"wrote to the workspace is still there.")
        return self._result(proc.returncode, out, err, out_cut or err_cut, timed_out, timeout,
                            elapsed)

    @staticmethod
    def _kill(proc: asyncio.subprocess.Process) -> None:
        # The launcher's group; the sandbox's own PID namespace dies with its first process.
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            proc.kill()

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
