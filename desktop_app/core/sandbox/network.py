"""Programs without network: a local MCP server runs in a network namespace of its own
(only its own loopback, nothing reaches or leaves the computer) unless the user allowed
that server network access (issue 25). Its files and environment are the user's as
before (MCP servers are programs the user chose to run), with three doors closed that an
attack found open:

* Unix sockets: the namespace does not cover sockets reached through the file system (a
  relay listening on a socket file, the session bus). ``socket(AF_UNIX)`` is refused by
  the code sandbox's seccomp filter (``socketpair`` stays: asyncio needs it);
* the app's own settings and data are read-only inside, so a server cannot give itself
  network access in ``settings.json`` or touch the privacy ledger;
* the filter also refuses ``ptrace`` of other processes.
"""

from __future__ import annotations

import shutil
import sys

from desktop_app.core.errors import ConfigError
from desktop_app.core.sandbox.status import sandbox_status


def without_network(command: list[str], *, server: str) -> list[str]:
    """``command`` wrapped so that it runs with no network (Linux: bubblewrap's network
    namespace). Where that is impossible the server is not started: ``ConfigError`` says
    why and how to allow it network access instead."""
    program = shutil.which(command[0]) if command else None
    if program is None:  # said here: inside the namespace it would be bwrap's own words
        raise ConfigError(f"The program '{command[0] if command else ''}' was not found.",
                          hint="Check the server's command in Settings → MCP.")
    if sys.platform.startswith("linux"):
        status = sandbox_status()
        bwrap = shutil.which("bwrap")
        if status.available and bwrap is not None:
            return _wrapped(bwrap, [program, *command[1:]])
        reason = status.reason
    else:
        reason = "This system has no network namespaces."
    raise ConfigError(
        f"The MCP server '{server}' was not started: it runs without network access, and "
        f"this computer cannot take the network away from a program. {reason}",
        hint=f"If you trust '{server}' to use the network, allow it in Settings → MCP "
             "(\"network\": true).")


def _wrapped(bwrap: str, command: list[str]) -> list[str]:
    import shlex

    from desktop_app.core.paths import cache_dir, config_dir, data_dir
    from desktop_app.core.sandbox.seccomp import filter_program

    argv = [bwrap, "--unshare-net", "--dev-bind", "/", "/", "--die-with-parent"]
    for own in (config_dir(), data_dir()):
        argv += ["--ro-bind", str(own), str(own)]
    program = filter_program()
    if program is None:
        return [*argv, "--", *command]
    # The MCP SDK starts the server with only stdin/out/err open, so the filter reaches
    # bubblewrap through a shell that opens it as descriptor 9.
    filter_file = cache_dir() / "mcp-seccomp.bpf"
    if not filter_file.exists() or filter_file.read_bytes() != program:
        filter_file.write_bytes(program)
    script = (f"exec {shlex.join([*argv, '--seccomp', '9', '--', *command])} "
              f"9<{shlex.quote(str(filter_file))}")
    return ["/bin/sh", "-c", script]
