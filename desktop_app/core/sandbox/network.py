"""Programs without network: a local MCP server runs in a network namespace of its own
(only its own loopback, nothing reaches or leaves the computer) unless the user allowed
that server network access (issue 25). Its files and environment are the user's as
before: MCP servers are programs the user chose to run, so only the network is taken away.
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
            return [bwrap, "--unshare-net", "--dev-bind", "/", "/", "--die-with-parent",
                    "--", program, *command[1:]]
        reason = status.reason
    else:
        reason = "This system has no network namespaces."
    raise ConfigError(
        f"The MCP server '{server}' was not started: it runs without network access, and "
        f"this computer cannot take the network away from a program. {reason}",
        hint=f"If you trust '{server}' to use the network, allow it in Settings → MCP "
             "(\"network\": true).")
