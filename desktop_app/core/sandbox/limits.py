"""Kernel resource limits for a sandboxed process tree (POSIX ``setrlimit``).

Applied in ``preexec_fn`` to the sandbox launcher, so the launcher and every process the
program starts inherit them. The wall-clock limit is the caller's (it kills the launcher,
and with it the sandbox's PID namespace).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass

try:  # POSIX only; imported here because importing in a forked child could deadlock
    import resource
except ImportError:  # Windows
    resource = None  # type: ignore[assignment]

MAX_FILE_BYTES = 100 * 1024 * 1024


@dataclass(frozen=True)
class Limits:
    """What one tool call may use."""

    memory_mb: int = 512
    cpu_seconds: int = 30
    #: Processes (and threads) the program may start beyond what the user already runs.
    processes: int = 64
    file_bytes: int = MAX_FILE_BYTES


def _user_process_count() -> int:
    """Processes of this user now: RLIMIT_NPROC counts all of them, not just ours."""
    uid = str(os.getuid())
    count = 0
    try:
        names = os.listdir("/proc")
    except OSError:
        return 0
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/status", encoding="ascii", errors="replace") as status:
                for line in status:
                    if line.startswith("Uid:"):
                        count += line.split()[1] == uid
                        break
        except OSError:
            continue
    return count


def limit_process(limits: Limits, procs_file: str | None = None) -> Callable[[], None] | None:
    """A ``preexec_fn`` applying ``limits``; None where the platform has no rlimits.

    ``procs_file``: a pids cgroup's ``cgroup.procs`` (``PidsCgroup``); the launcher joins it
    before exec, so it and everything it starts count against that cgroup's ``pids.max``.

    The process count is relative to what the user already runs (RLIMIT_NPROC is per
    user). The kernel does not apply it to root, so on a root account a fork bomb is
    contained by the PID namespace and the wall-clock limit instead (tests/security).
    """
    if resource is None:
        return None
    nproc = _user_process_count() + limits.processes
    memory = limits.memory_mb * 1024 * 1024

    def apply() -> None:
        assert resource is not None
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
        resource.setrlimit(resource.RLIMIT_CPU, (limits.cpu_seconds, limits.cpu_seconds + 1))
        resource.setrlimit(resource.RLIMIT_FSIZE, (limits.file_bytes, limits.file_bytes))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        resource.setrlimit(resource.RLIMIT_NPROC, (nproc, nproc))
        if procs_file is not None:
            with open(procs_file, "w", encoding="ascii") as procs:
                procs.write(str(os.getpid()))

    return apply
