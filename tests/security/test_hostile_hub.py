"""A hostile model hub (a real HTTP server on loopback) cannot fill the disk past what it
declared, cannot slip an unverifiable file through, and its errors are messages, not
tracebacks."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from hub_fakes import FakeHub, HubFile, serve_hub, write_tiny_gguf

from desktop_app.core.catalogue.hub import HubError, download_model, list_quantisations
from desktop_app.core.errors import DesktopAppError


@pytest.fixture
def hub(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeHub]:
    files = tmp_path / "hub-files"
    files.mkdir()
    model = write_tiny_gguf(files / "evil-Q4_K_M.gguf", data_bytes=4 * 1024 * 1024)
    fake = FakeHub(repos={"evil/Model-GGUF": {"evil-Q4_K_M.gguf": HubFile(model)}})
    for served in serve_hub(fake):
        monkeypatch.setenv("HF_ENDPOINT", served.url)
        monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
        yield served


def test_a_body_longer_than_declared_is_cut_off_and_removed(hub: FakeHub,
                                                            tmp_path: Path) -> None:
    entry = hub.repos["evil/Model-GGUF"]["evil-Q4_K_M.gguf"]
    entry.announced_size = 1024 * 1024  # declares 1 MiB, sends 4 MiB
    [model] = list_quantisations("evil/Model-GGUF")
    with pytest.raises(HubError, match="more than the 1,048,576 bytes"):
        download_model(model, tmp_path / "models")
    assert list((tmp_path / "models").iterdir()) == []  # nothing kept, part file included


def test_a_file_without_a_declared_size_is_not_downloaded(hub: FakeHub, tmp_path: Path) -> None:
    hub.repos["evil/Model-GGUF"]["evil-Q4_K_M.gguf"].announced_size = 0
    [model] = list_quantisations("evil/Model-GGUF")
    with pytest.raises(HubError, match="does not say how large") as raised:
        download_model(model, tmp_path / "models")
    assert raised.value.hint  # what to do instead
    assert not (tmp_path / "models").exists() or not list((tmp_path / "models").iterdir())
    assert not [r for r in hub.requests if r[1].endswith(".gguf")]  # not even asked for


def test_hub_errors_are_the_apps_own_errors_with_a_message() -> None:
    assert issubclass(HubError, DesktopAppError)
