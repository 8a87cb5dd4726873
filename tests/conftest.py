"""Shared test fixtures: every test gets its own app home and an in-memory keyring."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

# Qt must be configured before anything imports it; harmless for tests that never use Qt.
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("QTWEBENGINE_DISABLE_SANDBOX", "1")
os.environ.setdefault("QTWEBENGINE_CHROMIUM_FLAGS", "--disable-gpu --disable-background-networking")
# Nothing may reach the internet: a hub call that a test did not point at its own loopback
# hub goes to a closed local port and fails at once.
os.environ["HF_ENDPOINT"] = "http://127.0.0.1:9"
os.environ["HF_HUB_DISABLE_TELEMETRY"] = "1"

import keyring
import pytest
from keyring.backend import KeyringBackend


class MemoryKeyring(KeyringBackend):
    """A keyring that lives in memory only (tests must never touch a real one)."""

    priority = 1  # type: ignore[assignment]

    def __init__(self) -> None:
        super().__init__()
        self.store: dict[tuple[str, str], str] = {}

    def get_password(self, service: str, username: str) -> str | None:
        return self.store.get((service, username))

    def set_password(self, service: str, username: str, password: str) -> None:
        self.store[(service, username)] = password

    def delete_password(self, service: str, username: str) -> None:
        self.store.pop((service, username), None)


@pytest.fixture(autouse=True)
def app_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """All app state (config, data, cache) for this test lives under a fresh folder."""
    home = tmp_path / "app-home"
    home.mkdir()
    monkeypatch.setenv("DESKTOP_APP_HOME", str(home))
    return home


@pytest.fixture(autouse=True)
def memory_keyring() -> Iterator[MemoryKeyring]:
    previous = keyring.get_keyring()
    backend = MemoryKeyring()
    keyring.set_keyring(backend)
    yield backend
    keyring.set_keyring(previous)


# Real-model and real-server fixtures shared by every test package.
from fixtures_llama import *
from fixtures_server import *


@pytest.fixture
def small_disk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A real 3 MB file system holding the app's home (DESKTOP_APP_HOME), to fill with
    ``disk_helpers.fill_disk``. Mounting needs root: skipped elsewhere (CI here is root)."""
    import subprocess

    disk = tmp_path / "disk"
    disk.mkdir()
    if os.geteuid() != 0:
        pytest.skip("mounting a small file system needs root")
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=3m", "tmpfs", str(disk)],
                          capture_output=True, check=False)
    if done.returncode != 0:
        pytest.skip(f"no tmpfs here: {done.stderr.decode(errors='replace')}")
    monkeypatch.setenv("DESKTOP_APP_HOME", str(disk / "home"))
    try:
        yield disk
    finally:
        subprocess.run(["umount", "-l", str(disk)], check=False)
