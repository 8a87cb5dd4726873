"""What the app's process tries on the network, seen by an audit hook (every
``socket.getaddrinfo`` and ``socket.connect``), and a model hub served on this machine's
LAN address (to the app, another computer). Shared by the offline-lock and privacy tests."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fake_openai_server import this_computers_lan_address
from hub_fakes import FakeHub, HubFile, serve_hub, write_tiny_gguf

from desktop_app.core import egress

_seen: list[tuple[str, str]] = []
_recording = False


def _hook(event: str, args: tuple[Any, ...]) -> None:
    if not _recording:
        return
    if event == "socket.getaddrinfo":
        _seen.append((event, str(args[0])))
    elif event == "socket.connect" and len(args) > 1:
        address = args[1]
        _seen.append((event, str(address[0] if isinstance(address, tuple) else address)))


sys.addaudithook(_hook)  # once per process: this module is imported once


@pytest.fixture
def network() -> Iterator[list[tuple[str, str]]]:
    """(event, host) of every lookup and connection during the test; the offline lock is
    off again afterwards."""
    global _recording
    _seen.clear()
    _recording = True
    try:
        yield _seen
    finally:
        _recording = False
        egress.set_offline(False)


def off_computer(seen: list[tuple[str, str]]) -> list[tuple[str, str]]:
    return [(event, host) for event, host in seen if not egress.is_local_host(host)]


@pytest.fixture
def lan_hub(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeHub]:
    """A hub with one small GGUF repo, on the LAN address; HF_ENDPOINT points at it."""
    address = this_computers_lan_address()
    if address is None:
        pytest.skip("this machine has no non-loopback address")
    files = tmp_path / "hub-files"
    files.mkdir()
    tiny = write_tiny_gguf(files / "tiny-Q4_K_M.gguf", data_bytes=64 * 1024)
    fake = FakeHub(repos={"acme/Tiny-GGUF": {"tiny-Q4_K_M.gguf": HubFile(tiny)}})
    for served in serve_hub(fake, host=address):
        monkeypatch.setenv("HF_ENDPOINT", served.url)
        monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
        yield served
