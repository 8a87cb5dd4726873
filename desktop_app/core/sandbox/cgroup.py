"""A pids cgroup per sandboxed call, where the machine lets the app make one.

RLIMIT_NPROC counts every process of the user and the kernel does not apply it to root, so
on its own it cannot stop a fork bomb run as root (measured: 25–107 s until the wall-clock
limit reaped it). A cgroup's ``pids.max`` counts only the processes of this one call, for
any user. It is used where a writable pids hierarchy exists (cgroup v1 with a pids
controller, or cgroup v2 where the controller is delegated to the app's own cgroup);
elsewhere the rlimit stays the only count limit.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
import uuid
from pathlib import Path


def _mounts() -> list[tuple[str, str, str]]:
    """(mount point, type, options) from /proc/self/mounts."""
    try:
        lines = Path("/proc/self/mounts").read_text().splitlines()
    except OSError:
        return []
    out = []
    for line in lines:
        parts = line.split()
        if len(parts) >= 4:
            out.append((parts[1], parts[2], parts[3]))
    return out


def _own_paths() -> dict[str, str]:
    """Controller (or "" for cgroup v2) → this process's cgroup path."""
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return {}
    out: dict[str, str] = {}
    for line in lines:
        _, controllers, path = line.split(":", 2)
        for controller in controllers.split(",") if controllers else [""]:
            out[controller] = path
    return out


def _candidates() -> list[Path]:
    own = _own_paths()
    found = []
    for point, kind, options in _mounts():
        if kind == "cgroup" and "pids" in options.split(",") and "pids" in own:
            found.append(Path(point) / own["pids"].lstrip("/"))
        elif kind == "cgroup2" and "" in own:
            found.append(Path(point) / own[""].lstrip("/"))
    return found


class PidsCgroup:
    """One call's cgroup: ``procs_file`` is where the launcher writes its pid before exec."""

    def __init__(self, path: Path) -> None:
        self.path = path

    @classmethod
    def create(cls, max_pids: int) -> PidsCgroup | None:
        """A new cgroup limited to ``max_pids`` processes, or None where none can be made."""
        for base in _candidates():
            path = base / f"desktop-app-sandbox-{uuid.uuid4().hex[:12]}"
            try:
                path.mkdir()
            except OSError:
                continue
            try:
                (path / "pids.max").write_text(str(max_pids))
            except OSError:  # no pids controller in this (v2) subtree
                with contextlib.suppress(OSError):
                    path.rmdir()
                continue
            return cls(path)
        return None

    @property
    def procs_file(self) -> str:
        return str(self.path / "cgroup.procs")

    def pids(self) -> list[int]:
        try:
            return [int(p) for p in Path(self.procs_file).read_text().split()]
        except (OSError, ValueError):
            return []

    def remove(self, timeout: float = 10.0) -> None:
        """Kill whatever is left in it, then delete it (it must be empty to go)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for pid in self.pids():
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
            try:
                self.path.rmdir()
                return
            except OSError:
                time.sleep(0.05)
