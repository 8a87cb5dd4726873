"""Bootstrap for the Python code tool's child process (run as a script; stdlib only).

``python -I -B -X utf8 code_guard.py WORKSPACE [PARENT_NETNS]`` reads the user's code from
stdin, installs an audit hook (PEP 578) and runs the code as ``__main__``.

The kernel-level limits (memory, CPU, file size, separate network namespace) were already
applied by the parent before exec. The audit hook is a second layer that also works where
namespaces are not available; it refuses:

* socket creation (no network, also on systems without network namespaces);
* opening files for writing, and deleting/renaming/creating files, outside the workspace;
* reading or listing files outside the workspace and the Python installation (so code
  cannot print the user's private files into the conversation);
* starting other programs and loading native libraries with ctypes (both would escape
  the hook), and signalling other processes;
* SQLite databases outside the workspace (SQLite opens files without an "open" event).

Audit hooks are not a complete sandbox on their own (PEP 578 says so); they sit on top of
the process limits, never instead of them.
"""

from __future__ import annotations

import io
import os
import sys
import traceback

WORKSPACE = os.path.realpath(sys.argv[1])
_PARENT_NETNS = sys.argv[2] if len(sys.argv) > 2 else ""

_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_TRUNC
_READ_ROOTS = tuple({os.path.realpath(p) for p in (
    WORKSPACE, sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix,
    *[p for p in sys.path if p], "/usr/lib", "/usr/lib64", "/lib", "/lib64", "/usr/local/lib",
    "/usr/share/zoneinfo", "/etc/localtime", "/dev/null", "/dev/urandom", "/dev/random",
    "/dev/zero") if p})
_FORBIDDEN = {
    "socket.__new__": "network access is disabled in the code tool",
    "socket.getaddrinfo": "network access is disabled in the code tool",
    "subprocess.Popen": "starting other programs is not allowed in the code tool",
    "os.system": "starting other programs is not allowed in the code tool",
    "os.exec": "starting other programs is not allowed in the code tool",
    "os.posix_spawn": "starting other programs is not allowed in the code tool",
    "os.spawn": "starting other programs is not allowed in the code tool",
    "os.fork": "starting other processes is not allowed in the code tool",
    "os.forkpty": "starting other processes is not allowed in the code tool",
    "pty.spawn": "starting other programs is not allowed in the code tool",
    "ctypes.dlopen": "loading native libraries (ctypes) is not allowed in the code tool",
    "ctypes.dlsym": "loading native libraries (ctypes) is not allowed in the code tool",
}
# Events whose first (and for rename/link/symlink also second) argument is a path changed.
_CHANGES_PATH = {"os.remove", "os.rmdir", "os.mkdir", "os.chmod", "os.chown", "os.truncate",
                 "os.utime", "os.chflags", "os.lchmod", "os.mkfifo", "os.mknod", "os.setxattr",
                 "os.removexattr", "shutil.rmtree", "shutil.chown"}
_TWO_PATHS = {"os.rename", "os.link", "os.symlink", "shutil.move", "shutil.copytree"}
_LISTS = {"os.listdir", "os.scandir", "glob.glob", "glob.glob/2"}


def _real(path: object) -> str | None:
    if isinstance(path, int) or path is None:
        return None  # an already-open descriptor: its opening was checked
    try:
        raw = os.fsdecode(path)  # type: ignore[arg-type]
    except TypeError:
        return None
    return os.path.realpath(os.path.join(os.getcwd(), raw))


def _inside(path: str, roots: tuple[str, ...]) -> bool:
    return any(path == root or path.startswith(root.rstrip("/") + "/") for root in roots)


def _refuse_outside_workspace(path: object, what: str) -> None:
    real = _real(path)
    if real is not None and not _inside(real, (WORKSPACE,)):
        shown = os.fsdecode(path)  # type: ignore[arg-type]
        raise PermissionError(f"{what} '{shown}' is outside the workspace; the code tool may "
                              f"only change files in the workspace folder")


def _hook(event: str, args: tuple[object, ...]) -> None:
    if event in _FORBIDDEN or event.startswith(("os.exec", "os.spawn")):
        raise PermissionError(_FORBIDDEN.get(event, "starting other programs is not allowed"))
    if event == "open":
        path, mode, flags = (list(args) + [None, None, 0])[:3]
        writing = (isinstance(flags, int) and flags & _WRITE_FLAGS) or (
            isinstance(mode, str) and any(c in mode for c in "wax+"))
        if writing:
            _refuse_outside_workspace(path, "Writing")
        else:
            real = _real(path)
            if real is not None and not _inside(real, _READ_ROOTS):
                shown = os.fsdecode(path)  # type: ignore[arg-type]
                raise PermissionError(f"Reading '{shown}' is not allowed: the code tool may "
                                      f"only read files in the workspace folder")
    elif event in _CHANGES_PATH:
        _refuse_outside_workspace(args[0] if args else None, "Changing")
    elif event in _TWO_PATHS:
        for path in args[:2]:
            _refuse_outside_workspace(path, "Changing")
    elif event == "sqlite3.connect":
        # SQLite opens its files itself (no "open" event): only in-memory or workspace files.
        database = args[0] if args else ":memory:"
        if database not in (":memory:", "", b":memory:", b"") and not (
                isinstance(database, str) and database.startswith("file::memory:")):
            _refuse_outside_workspace(database, "Opening a database")
    elif event in ("os.kill", "os.killpg"):
        if not args or args[0] not in (os.getpid(), 0):
            raise PermissionError("signalling other processes is not allowed in the code tool")
    elif event in _LISTS:
        real = _real(args[0] if args else ".")
        if real is not None and not _inside(real, _READ_ROOTS):
            raise PermissionError("Listing folders outside the workspace is not allowed")


def _network_status() -> str:
    try:
        own = str(os.stat("/proc/self/ns/net").st_ino)
    except OSError:
        return "unknown"
    return "namespace" if _PARENT_NETNS and own != _PARENT_NETNS else "audit-hook"


def main() -> int:
    code = sys.stdin.read()
    sys.stdin = io.StringIO("")  # the program gets no interactive input
    os.chdir(WORKSPACE)
    if os.environ.get("CODE_TOOL_REPORT_NETWORK"):
        print(f"[network isolation: {_network_status()}]", file=sys.stderr)
    sys.addaudithook(_hook)
    namespace = {"__name__": "__main__", "__builtins__": __builtins__}
    try:
        exec(compile(code, "<code>", "exec"), namespace)
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except BaseException as exc:
        # Show the user's traceback without this bootstrap's own frame.
        tb = exc.__traceback__.tb_next if exc.__traceback__ else None
        traceback.print_exception(type(exc), exc, tb)
        return 1
    return 0


if __name__ == "__main__":
    status = main()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)  # skip interpreter teardown hooks the user's code may have registered
