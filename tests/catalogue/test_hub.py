"""Search, list and download through the real ``huggingface_hub`` client and real HTTP,
against a hub on loopback: nothing reaches the internet."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from hub_fakes import FakeHub, HubFile, serve_hub, write_tiny_gguf

from desktop_app.core.catalogue.gguf_meta import read_gguf
from desktop_app.core.catalogue.hub import (
    DownloadControl,
    DownloadStopped,
    HubError,
    download_model,
    list_quantisations,
    quantisation_of,
    search_models,
)


@pytest.fixture
def hub(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeHub]:
    files = tmp_path / "hub-files"
    files.mkdir()
    small = write_tiny_gguf(files / "tiny-Q4_K_M.gguf", data_bytes=3 * 1024 * 1024)
    big = write_tiny_gguf(files / "tiny-Q8_0.gguf", data_bytes=5 * 1024 * 1024)
    split1 = write_tiny_gguf(files / "big-Q4_K_M-00001-of-00002.gguf", data_bytes=1024 * 1024)
    split2 = write_tiny_gguf(files / "big-Q4_K_M-00002-of-00002.gguf", data_bytes=1024 * 1024)
    (files / "README.md").write_text("model card")
    fake = FakeHub(repos={
        "acme/Tiny-GGUF": {"tiny-Q4_K_M.gguf": HubFile(small), "tiny-Q8_0.gguf": HubFile(big),
                           "README.md": HubFile(files / "README.md")},
        "acme/Big-GGUF": {"big-Q4_K_M-00001-of-00002.gguf": HubFile(split1),
                          "big-Q4_K_M-00002-of-00002.gguf": HubFile(split2)},
    })
    for served in serve_hub(fake):
        monkeypatch.setenv("HF_ENDPOINT", served.url)
        monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
        yield served


def test_search_lists_matching_gguf_repos(hub: FakeHub) -> None:
    found = search_models("tiny")
    assert [r.repo for r in found] == ["acme/Tiny-GGUF"]
    assert hub.requests[0][1] == "/api/models"


def test_a_repo_lists_its_quantisations_with_sizes_and_split_files_grouped(hub: FakeHub) -> None:
    tiny = list_quantisations("acme/Tiny-GGUF")
    assert [(m.quantisation, m.files) for m in tiny] == [
        ("Q4_K_M", ["tiny-Q4_K_M.gguf"]), ("Q8_0", ["tiny-Q8_0.gguf"])]  # smallest first
    assert tiny[0].size == (hub.repos["acme/Tiny-GGUF"]["tiny-Q4_K_M.gguf"].path.stat().st_size)
    [big] = list_quantisations("acme/Big-GGUF")
    assert big.files == ["big-Q4_K_M-00001-of-00002.gguf", "big-Q4_K_M-00002-of-00002.gguf"]
    assert big.quantisation == "Q4_K_M" and len(big.sha256) == 2


def test_unknown_repo_and_offline_mode_are_clear_errors(hub: FakeHub,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(HubError, match="no such model repository"):
        list_quantisations("acme/Nope")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(HubError, match="offline"):
        search_models("tiny")


@pytest.mark.parametrize(("name", "quant"), [
    ("Qwen2.5-7B-Instruct-Q4_K_M.gguf", "Q4_K_M"), ("model.IQ3_XS.gguf", "IQ3_XS"),
    ("phi-3-mini-4k-instruct-fp16.gguf", "?"), ("llama-f16.gguf", "F16"),
    ("x-Q5_K_S-00001-of-00003.gguf", "Q5_K_S"),
])
def test_quantisation_from_file_name(name: str, quant: str) -> None:
    assert quantisation_of(name) == quant


def test_a_download_resumes_after_a_dropped_connection(hub: FakeHub, tmp_path: Path) -> None:
    [model, _] = list_quantisations("acme/Tiny-GGUF")
    hub.drop_after = [1024 * 1024 + 17]  # the first transfer stops mid-file
    seen: list[int] = []
    path = download_model(model, tmp_path / "models", on_progress=lambda p: seen.append(p.done))
    assert path.read_bytes() == hub.repos["acme/Tiny-GGUF"]["tiny-Q4_K_M.gguf"].path.read_bytes()
    first, second = [r for _m, p, r in hub.requests if p.endswith("tiny-Q4_K_M.gguf")]
    # The second request asked for the rest: from what had been written (the client
    # hands over whole reads, so up to one read short of the cut).
    assert first is None and second is not None
    assert 0 < int(second.removeprefix("bytes=").rstrip("-")) <= 1024 * 1024 + 17
    assert seen[-1] == model.size and seen == sorted(seen)
    assert read_gguf(path).architecture == "llama"
    assert not list((tmp_path / "models").glob("*.part"))


def test_a_corrupted_download_is_caught_by_the_hash_and_never_becomes_a_model(
        hub: FakeHub, tmp_path: Path) -> None:
    hub.repos["acme/Tiny-GGUF"]["tiny-Q4_K_M.gguf"].sha256 = "ab" * 32
    [model, _] = list_quantisations("acme/Tiny-GGUF")
    with pytest.raises(HubError, match="corrupted"):
        download_model(model, tmp_path / "models")
    assert list((tmp_path / "models").iterdir()) == []


def test_a_server_that_ignores_ranges_restarts_the_file_instead_of_doubling_it(
        hub: FakeHub, tmp_path: Path) -> None:
    [model, _] = list_quantisations("acme/Tiny-GGUF")
    hub.drop_after = [500_000]
    hub.ignore_ranges = True
    path = download_model(model, tmp_path / "models")
    assert path.stat().st_size == model.size


def test_pause_keeps_the_part_file_and_a_later_download_resumes_it(
        hub: FakeHub, tmp_path: Path) -> None:
    [model, _] = list_quantisations("acme/Tiny-GGUF")
    control = DownloadControl()

    def pause_after_first_chunk(progress) -> None:
        control.pause.set()

    with pytest.raises(DownloadStopped) as stopped:
        download_model(model, tmp_path / "models", on_progress=pause_after_first_chunk,
                       control=control)
    assert not stopped.value.cancelled
    [part] = (tmp_path / "models").glob("*.part")
    kept = part.stat().st_size
    assert 0 < kept < model.size
    path = download_model(model, tmp_path / "models")
    assert path.stat().st_size == model.size
    assert [r for _, p, r in hub.requests if p.endswith("Q4_K_M.gguf")][-1] == f"bytes={kept}-"


def test_cancel_removes_the_part_file(hub: FakeHub, tmp_path: Path) -> None:
    [model, _] = list_quantisations("acme/Tiny-GGUF")
    control = DownloadControl()
    with pytest.raises(DownloadStopped) as stopped:
        download_model(model, tmp_path / "models", control=control,
                       on_progress=lambda _p: control.cancel.set())
    assert stopped.value.cancelled
    assert list((tmp_path / "models").iterdir()) == []


def test_a_split_model_downloads_every_part(hub: FakeHub, tmp_path: Path) -> None:
    [model] = list_quantisations("acme/Big-GGUF")
    first = download_model(model, tmp_path / "models")
    assert first.name == "big-Q4_K_M-00001-of-00002.gguf"
    assert (first.parent / "big-Q4_K_M-00002-of-00002.gguf").exists()


def test_not_enough_disk_space_stops_before_downloading(
        hub: FakeHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import shutil
    from collections import namedtuple

    usage = namedtuple("usage", "total used free")
    monkeypatch.setattr(shutil, "disk_usage", lambda _p: usage(10**9, 10**9, 1024))
    [model, _] = list_quantisations("acme/Tiny-GGUF")
    with pytest.raises(HubError, match="Not enough disk space"):
        download_model(model, tmp_path / "models")
    assert not [r for r in hub.requests if "resolve" in r[1]]


def test_downloads_run_in_a_thread_and_report_progress_across_threads(
        hub: FakeHub, tmp_path: Path) -> None:
    [model, _] = list_quantisations("acme/Tiny-GGUF")
    result: list[Path] = []
    worker = threading.Thread(target=lambda: result.append(
        download_model(model, tmp_path / "models")))
    worker.start()
    worker.join(60)
    assert result and result[0].stat().st_size == model.size


def test_a_hub_that_cannot_be_reached_is_said_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """huggingface_hub retried a refused connection five times (24 s of "Searching…")."""
    import socket
    import time

    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{port}")
    started = time.monotonic()
    with pytest.raises(HubError, match="Check the network connection"):
        search_models("qwen")
    assert time.monotonic() - started < 5
