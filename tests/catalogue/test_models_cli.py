"""``desktop-app models …`` end to end: the real CLI, a loopback hub, real settings files."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from hub_fakes import FakeHub, HubFile, serve_hub, write_tiny_gguf

from desktop_app.cli import main
from desktop_app.core.catalogue.library import downloads_dir
from desktop_app.core.config.settings import load_settings


@pytest.fixture
def hub(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeHub]:
    files = tmp_path / "hub-files"
    files.mkdir()
    fake = FakeHub(repos={"acme/Tiny-GGUF": {
        "tiny-Q4_K_M.gguf": HubFile(write_tiny_gguf(files / "tiny-Q4_K_M.gguf",
                                                    data_bytes=2 * 1024 * 1024)),
        "tiny-Q8_0.gguf": HubFile(write_tiny_gguf(files / "tiny-Q8_0.gguf",
                                                  data_bytes=3 * 1024 * 1024))}})
    for served in serve_hub(fake):
        monkeypatch.setenv("HF_ENDPOINT", served.url)
        yield served


def test_search_pull_info_rm(hub: FakeHub, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["models", "search", "tiny"]) == 0
    assert "acme/Tiny-GGUF" in capsys.readouterr().out
    assert main(["models", "pull", "acme/Tiny-GGUF", "--list"]) == 0
    listing = capsys.readouterr().out
    assert "Q4_K_M" in listing and "Q8_0" in listing
    assert main(["models", "pull", "acme/Tiny-GGUF"]) == 0  # Q4_K_M by default
    out = capsys.readouterr()
    assert "Added 'tiny-q4_k_m'" in out.out and "100.0%" in out.err
    [model] = load_settings().local_models
    path = Path(model.path)
    assert path.parent.parent == downloads_dir() and path.name == "tiny-Q4_K_M.gguf"
    assert main(["models", "info", "tiny-q4_k_m", "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["architecture"] == "llama" and info["fit"]["verdict"] == "fits"
    assert info["memory"]["context_size"] == model.context_size
    assert main(["models", "rm", "tiny-q4_k_m"]) == 0
    assert "MiB freed" in capsys.readouterr().out
    assert not path.exists() and load_settings().local_models == []


def test_pull_of_an_unknown_file_says_how_to_list(hub: FakeHub,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["models", "pull", "acme/Tiny-GGUF", "Q2_K"]) == 2
    assert "--list" in capsys.readouterr().err


def test_scan_and_add_other_apps_models_without_copying(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    home = tmp_path / "home"
    target = home / ".lmstudio/models/pub/Repo-GGUF/repo-Q4_K_M.gguf"
    target.parent.mkdir(parents=True)
    write_tiny_gguf(target)
    monkeypatch.setenv("HOME", str(home))
    for variable in ("HF_HOME", "HF_HUB_CACHE", "OLLAMA_MODELS"):
        monkeypatch.delenv(variable, raising=False)
    assert main(["models", "scan", "--json"]) == 0
    [found] = json.loads(capsys.readouterr().out)
    assert found["app"] == "LM Studio" and found["path"] == str(target)
    assert main(["models", "scan", "--add"]) == 0
    [model] = load_settings().local_models
    assert model.path == str(target.resolve())  # the file where it is
    assert main(["models", "rm", "repo-q4_k_m"]) == 0
    assert target.exists()  # not the app's download: only forgotten


def test_add_rejects_a_file_that_is_not_a_model(tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    fake = tmp_path / "notes.gguf"
    fake.write_text("hello")
    assert main(["models", "add", str(fake)]) == 2
    err = capsys.readouterr().err
    assert "cannot be added" in err and "Traceback" not in err
    assert load_settings().local_models == []


@pytest.mark.real_model
def test_bench_measures_and_stores_the_bundled_model(
        bundled_model_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["models", "bench", str(bundled_model_path), "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["load_seconds"] > 0 and result["prompt_tokens"] > 200
    assert result["prompt_tokens_per_second"] > result["generation_tokens_per_second"] > 0
    assert result["generated_tokens"] == 64
    from desktop_app.core.store.conversation_store import ConversationStore

    with ConversationStore() as store:
        [stored] = store.latest_benchmarks().values()
    assert stored.results["prompt_tokens"] == result["prompt_tokens"]
    assert os.path.basename(str(bundled_model_path)) in stored.model_key


@pytest.mark.real_model
def test_the_bundled_gguf_pulled_from_a_hub_resumes_and_verifies(
        bundled_model_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    name = bundled_model_path.name
    fake = FakeHub(repos={"Qwen/Qwen2.5-Coder-0.5B-Instruct-GGUF": {
        name: HubFile(bundled_model_path)}})
    fake.drop_after = [100 * 1024 * 1024]  # the connection drops after 100 MiB
    for served in serve_hub(fake):
        monkeypatch.setenv("HF_ENDPOINT", served.url)
        assert main(["models", "pull", "Qwen/Qwen2.5-Coder-0.5B-Instruct-GGUF"]) == 0
    assert "Added" in capsys.readouterr().out
    ranges = [r for _m, p, r in fake.requests if p.endswith(name)]
    assert len(ranges) == 2 and ranges[1] and ranges[1].startswith("bytes=")
    [model] = load_settings().local_models
    pulled = Path(model.path)
    assert pulled.stat().st_size == bundled_model_path.stat().st_size
    assert main(["models", "info", model.name, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["architecture"] == "qwen2"
