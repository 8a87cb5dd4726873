"""The offline lock: the check every connection the app makes passes first (SPEC §11).

Hosted model calls (the openai adapter), model hub search and downloads (catalogue/hub.py)
ask ``guard(url, purpose)`` before they open anything. While the lock is on, a destination
that is not this computer is refused before any DNS lookup or connection, with a message
that says what was blocked and how to allow it. This computer means ``localhost`` or a
loopback address written as one (127.0.0.0/8, ::1): a name is never looked up to decide,
so ``http://blocked.invalid/v1`` is refused without asking a resolver. MCP servers over
HTTP are loopback-only already (tools/mcp_client.py); the artifact view loads nothing.

The lock is process-wide: the ``--offline`` flag of every command, the ``privacy.offline``
setting, and the window's switch set it.
"""

from __future__ import annotations

import ipaddress
import threading
from urllib.parse import urlsplit

from desktop_app.core.errors import DesktopAppError

_lock = threading.Lock()
_offline = False


class OfflineBlockedError(DesktopAppError):
    """A connection off this computer was refused because the offline lock is on."""


def set_offline(on: bool) -> None:
    """Turn the offline lock on or off for this process."""
    global _offline
    with _lock:
        _offline = bool(on)


def is_offline() -> bool:
    return _offline


def is_local_host(host: str) -> bool:
    """``host`` is this computer, decided from its text alone (no DNS lookup)."""
    name = host.strip().strip("[]").rstrip(".").lower()
    if name == "localhost":
        # Only the name itself: "x.localhost" should be loopback (RFC 6761), but resolvers
        # may forward it to a DNS server, so under the lock it would leak its words.
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def is_local_url(url: str) -> bool:
    return is_local_host(urlsplit(url).hostname or "")


def guard(url: str, purpose: str) -> None:
    """Raise ``OfflineBlockedError`` when the lock is on and ``url`` leaves the computer,
    and ``LedgerError`` when the privacy ledger cannot record the request."""
    host = urlsplit(url).hostname or url
    if not _offline or is_local_host(host):
        from desktop_app.core.egress.ledger import ledger

        ledger().check()
        return
    raise OfflineBlockedError(
        f"The offline lock is on, so the {purpose} to {host} was not sent (nothing left "
        "this computer).",
        hint="Turn the offline lock off to allow it (Settings, or run the command without "
             "--offline). Models and servers on this computer (localhost) keep working.")
