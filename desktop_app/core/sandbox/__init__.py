"""OS-level sandboxes for programs the model writes (the ``run_python`` tool).

One entry: ``sandbox_status()`` says whether this machine can sandbox and why not;
``sandboxed_argv()`` wraps a command so it runs inside the sandbox with the workspace as its
only writable folder. In-process checks (audit hooks) are not a sandbox (PEP 578 says so),
so without an OS sandbox the code tool cannot be enabled at all.

* Linux: bubblewrap (``bwrap``): new user, mount, PID, network, IPC, UTS and cgroup
  namespaces, every capability dropped, a read-only minimal system (``/usr`` and the Python
  installation), no home directory, no ``/run`` (so no session bus or keyring socket), a
  cleared environment, the workspace bound read-write at ``/workspace``, no ``/proc`` and
  the interpreter at ``/opt/python`` (no host path visible inside). The PID namespace dies
  with the tool call, taking every process started inside with it. What one call may write
  to disk is watched (``disk_quota``).
* macOS: ``sandbox-exec`` with a deny-by-default profile (written, not tested here: these
  machines run Linux).
* Windows: no sandbox; the tool stays off (README, "Security").
"""

from __future__ import annotations

from desktop_app.core.sandbox.cgroup import PidsCgroup
from desktop_app.core.sandbox.disk_quota import DiskBudget, DiskWatch
from desktop_app.core.sandbox.limits import Limits, limit_process
from desktop_app.core.sandbox.python_layout import (
    PythonInside,
    python_at_own_paths,
    python_inside,
)
from desktop_app.core.sandbox.status import SandboxStatus, sandbox_status, sandboxed_argv

__all__ = ["DiskBudget", "DiskWatch", "Limits", "PidsCgroup", "PythonInside",
           "SandboxStatus", "limit_process", "python_at_own_paths", "python_inside",
           "sandbox_status", "sandboxed_argv"]
