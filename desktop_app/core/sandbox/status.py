"""Is an OS sandbox available here, and the command line that runs a program inside it."""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from desktop_app.core.sandbox.python_layout import (
    PythonInside,
    python_at_own_paths,
    python_inside,
)

#: Where the workspace appears inside the sandbox (the host path, which may name the user,
#: stays hidden).
WORKSPACE_INSIDE = "/workspace"
_PROBE_TIMEOUT = 10.0


@dataclass(frozen=True)
class SandboxStatus:
    """``available``: programs can run sandboxed; ``reason`` says why not (for Settings)."""

    available: bool
    kind: str  # "bubblewrap", "sandbox-exec" or "none"
    reason: str = ""


@functools.cache
def sandbox_status() -> SandboxStatus:
    """Probe once per process: a sandbox that cannot start is no sandbox."""
    if sys.platform.startswith("linux"):
        return _probe_bubblewrap()
    if sys.platform == "darwin":
        if shutil.which("sandbox-exec"):
            return SandboxStatus(True, "sandbox-exec")
        return SandboxStatus(False, "none", "macOS's sandbox-exec was not found.")
    return SandboxStatus(False, "none", "There is no OS sandbox for programs on this system "
                                        "(Windows), so the Python code tool stays off.")


def _probe_bubblewrap() -> SandboxStatus:
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return SandboxStatus(False, "none", "The Python code tool runs programs in a "
                                            "bubblewrap sandbox, which is not installed. "
                                            "Install it (Debian/Ubuntu: sudo apt install "
                                            "bubblewrap; Fedora: sudo dnf install bubblewrap) "
                                            "and restart the app.")
    try:
        done = subprocess.run([bwrap, *_namespace_args(), "--ro-bind", "/", "/", "true"],
                              capture_output=True, text=True, timeout=_PROBE_TIMEOUT,
                              check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return SandboxStatus(False, "none", f"bubblewrap could not be started ({exc}).")
    if done.returncode != 0:
        detail = (done.stderr or "").strip().splitlines()[-1:] or ["no message"]
        return SandboxStatus(False, "none", "bubblewrap is installed but cannot create a "
                                            f"sandbox here ({detail[0]}). It needs "
                                            "unprivileged user namespaces (on Ubuntu 24.04 "
                                            "an AppArmor profile for bwrap).")
    return SandboxStatus(True, "bubblewrap")


def _namespace_args() -> list[str]:
    return ["--unshare-all", "--die-with-parent", "--new-session", "--cap-drop", "ALL"]


def _system_args() -> list[str]:
    """A minimal read-only system: /usr, the merged-/usr links, the linker cache."""
    args = ["--ro-bind", "/usr", "/usr"]
    for name in ("bin", "lib", "lib32", "lib64", "sbin"):
        host = Path("/") / name
        if host.is_symlink():
            args += ["--symlink", os.readlink(host), f"/{name}"]
        elif host.is_dir():
            args += ["--ro-bind", str(host), f"/{name}"]
    for name in ("/etc/ld.so.cache", "/etc/localtime", "/etc/alternatives"):
        args += ["--ro-bind-try", name, name]
    return args


def bubblewrap_argv(command: list[str], workspace: Path, *, bwrap: str = "bwrap",
                    scratch: Path | None = None, seccomp_fd: int | None = None,
                    python: PythonInside | None = None) -> list[str]:
    """``command`` inside bubblewrap; the workspace is the only writable folder, besides
    ``/tmp`` and ``/dev/shm``.

    With ``scratch`` (a folder on disk for this call), ``/tmp`` and ``/dev/shm`` are its
    ``tmp`` and ``shm``: on disk, each file held to the file-size limit, instead of tmpfs in
    memory, which the address-space limit does not count (1.5 GiB of the host's memory
    were filled under a 512 MB limit). The root and ``/dev`` are then read-only.

    No host path is visible inside: the workspace is ``/workspace``, the interpreter is
    where ``python`` (``python_layout.python_inside``) puts it, and there is no ``/proc``
    (its ``mountinfo`` names the source of every bind mount, the workspace's host path
    included; programs that read ``/proc`` see an empty folder)."""
    tmp = ["--tmpfs", "/tmp"]
    shm: list[str] = []
    if scratch is not None:
        (scratch / "tmp").mkdir(exist_ok=True)
        (scratch / "shm").mkdir(exist_ok=True)
        tmp = ["--bind", str(scratch / "tmp"), "/tmp"]
        shm = ["--bind", str(scratch / "shm"), "/dev/shm", "--remount-ro", "/dev"]
    argv = [bwrap, *_namespace_args(), "--hostname", "sandbox", *_system_args(),
            "--dir", "/proc", "--dev", "/dev", *shm, *tmp]
    # After /tmp's tmpfs: a Python installed under /tmp (a venv in a build folder) would be
    # hidden by it otherwise. Later mounts lie on top of earlier ones.
    python = python or python_inside()
    for host, inside in python.binds:
        argv += ["--ro-bind", host, inside]
    argv += ["--bind", str(workspace), WORKSPACE_INSIDE, "--chdir", WORKSPACE_INSIDE,
             # A clean environment: nothing of the app's (API keys, bus addresses) goes in.
             "--clearenv", "--setenv", "PATH", "/usr/local/bin:/usr/bin:/bin",
             "--setenv", "HOME", "/tmp", "--setenv", "TMPDIR", "/tmp",
             "--setenv", "LANG", "C.UTF-8", "--setenv", "MPLBACKEND", "Agg",
             "--setenv", "MPLCONFIGDIR", "/tmp"]
    if python.site_dirs:  # for Python programs the program itself starts
        argv += ["--setenv", "PYTHONPATH", ":".join(python.site_dirs)]
    if scratch is not None:
        argv += ["--remount-ro", "/"]  # last: the mounts above needed their mount points
    if seccomp_fd is not None:
        argv += ["--seccomp", str(seccomp_fd)]  # the filter of ``sandbox.seccomp``
    return [*argv, "--", *command]


def _seatbelt_quote(path: str) -> str:
    return '"' + path.replace("\\", "\\\\").replace('"', '\\"') + '"'


def seatbelt_profile(workspace: Path) -> str:
    """A deny-by-default ``sandbox-exec`` profile: read the system and Python, write only
    the workspace and a temp folder inside it, no network. Untested here (Linux machines)."""
    reads = " ".join(f"(subpath {_seatbelt_quote(p)})"
                     for p in ["/usr", "/System", "/Library", "/private/var/db/dyld",
                               *(host for host, _ in python_at_own_paths().binds)])
    ws = _seatbelt_quote(str(workspace))
    return ("(version 1)\n(deny default)\n(allow process-fork)\n(allow process-exec)\n"
            "(allow signal (target same-sandbox))\n(allow sysctl-read)\n"
            f"(allow file-read* {reads} (literal \"/dev/null\") (literal \"/dev/urandom\"))\n"
            f"(allow file-read* file-write* (subpath {ws}))\n"
            "(allow file-write* (literal \"/dev/null\"))\n(deny network*)\n")


def sandboxed_argv(command: list[str], workspace: Path, scratch: Path | None = None,
                   seccomp_fd: int | None = None,
                   python: PythonInside | None = None) -> list[str]:
    """``command`` wrapped in this machine's sandbox; raises RuntimeError without one.

    Inside, the workspace is the working directory (``/workspace`` on Linux); ``scratch``
    (Linux) backs ``/tmp`` and ``/dev/shm`` on disk (``bubblewrap_argv``); ``seccomp_fd``
    (Linux) is an open file holding the filter of ``sandbox.seccomp``, passed to the child."""
    status = sandbox_status()
    if not status.available:
        raise RuntimeError(status.reason)
    if status.kind == "bubblewrap":
        return bubblewrap_argv(command, workspace, bwrap=shutil.which("bwrap") or "bwrap",
                               scratch=scratch, seccomp_fd=seccomp_fd, python=python)
    return ["sandbox-exec", "-p", seatbelt_profile(workspace), *command]
