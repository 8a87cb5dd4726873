"""GGUF headers read without the weights, and models found in other apps' folders."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hub_fakes import write_tiny_gguf

from desktop_app.core.catalogue.fit import estimate_memory, gpu_layers_for, judge_fit
from desktop_app.core.catalogue.gguf_meta import GgufError, read_gguf
from desktop_app.core.catalogue.scan import scan_other_apps


def test_header_facts_are_read(tmp_path: Path) -> None:
    info = read_gguf(write_tiny_gguf(tmp_path / "m.gguf", layers=3, heads=8, kv_heads=2,
                                     embedding=128, context=8192, vocabulary=500))
    assert (info.architecture, info.layers, info.heads, info.kv_heads) == ("llama", 3, 8, 2)
    assert info.key_length == 16 and info.context_length == 8192
    assert info.vocabulary_size == 500 and info.quantisation == "Q4_K_M"
    assert info.parameters == 64 * 32 and info.chat_template == "{{ messages }}"
    assert info.tensor_bytes == 4096


def test_the_bundled_model_header(bundled_model_path: Path) -> None:
    info = read_gguf(bundled_model_path)
    assert (info.architecture, info.layers, info.kv_heads) == ("qwen2", 24, 2)
    assert 0.4e9 < info.parameters < 0.7e9 and info.quantisation == "Q4_K_M"
    assert "tool_call" in info.chat_template and info.context_length == 32768


@pytest.mark.parametrize("content", [b"", b"GGML" + b"\0" * 40, b"GGUF\x03\0\0\0" + b"\xff" * 16])
def test_broken_files_are_clear_errors(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "broken.gguf"
    path.write_bytes(content)
    with pytest.raises(GgufError):
        read_gguf(path)


def test_a_cut_short_header_is_a_clear_error(tmp_path: Path) -> None:
    whole = write_tiny_gguf(tmp_path / "whole.gguf").read_bytes()
    cut = tmp_path / "cut.gguf"
    cut.write_bytes(whole[:200])
    with pytest.raises(GgufError, match="cut short|past the end"):
        read_gguf(cut)


def test_split_parts_are_found_and_counted(tmp_path: Path) -> None:
    first = write_tiny_gguf(tmp_path / "m-Q4_K_M-00001-of-00002.gguf",
                            extra={"split.no": 0, "split.count": 2})
    second = write_tiny_gguf(tmp_path / "m-Q4_K_M-00002-of-00002.gguf",
                             extra={"split.no": 1, "split.count": 2})
    info = read_gguf(first)
    assert info.split_parts == [second]
    assert info.total_size == first.stat().st_size + second.stat().st_size
    odd = write_tiny_gguf(tmp_path / "odd-00001-of-00002.gguf", extra={"split.count": "x"})
    assert read_gguf(odd).split_parts == []  # not a count: not treated as split


def test_fit_verdicts_follow_free_memory(tmp_path: Path) -> None:
    info = read_gguf(write_tiny_gguf(tmp_path / "m.gguf", data_bytes=64 * 1024))
    estimate = estimate_memory(info, 4096)
    assert estimate.total > estimate.at_load > estimate.weights
    assert judge_fit(estimate, estimate.total * 2).verdict == "fits"
    assert judge_fit(estimate, int(estimate.total * 1.1)).verdict == "tight"
    small = judge_fit(estimate, estimate.total // 2)
    assert small.verdict == "does not fit" and "MiB free" in small.explanation
    assert estimate_memory(info, 8192).kv_cache == 2 * estimate.kv_cache


def test_gpu_layers_by_fit(tmp_path: Path) -> None:
    info = read_gguf(write_tiny_gguf(tmp_path / "m.gguf", layers=10, data_bytes=1024 * 1024))
    assert gpu_layers_for(info, 2048, None) == 0  # a CPU build: nothing to offload
    assert gpu_layers_for(info, 2048, 10**12) == 10
    whole = estimate_memory(info, 2048)
    half = int((whole.weights + whole.kv_cache) / 2 + whole.scratch + whole.runtime) / 0.9
    assert 3 <= gpu_layers_for(info, 2048, int(half)) <= 6


def _link(source: Path, target: Path) -> Path:
    target.parent.mkdir(parents=True, exist_ok=True)
    os.link(source, target)
    return target


def test_models_of_other_apps_are_found_where_they_keep_them(tmp_path: Path) -> None:
    home = tmp_path / "home"
    model = write_tiny_gguf(tmp_path / "model.gguf")
    lm = _link(model, home / ".lmstudio/models/lmstudio-community/Qwen-GGUF/qwen-Q4_K_M.gguf")
    _link(model, home / ".lmstudio/models/x/y/mmproj-model-f16.gguf")  # a vision projector
    (home / ".lmstudio/models/x/y/half.gguf.part").write_bytes(b"GGUF")  # unfinished
    # Ollama: the manifest names the weights blob by digest.
    blob = _link(model, home / ".ollama/models/blobs/sha256-abc123")
    manifest = home / ".ollama/models/manifests/registry.ollama.ai/library/llama3.2/3b"
    manifest.parent.mkdir(parents=True)
    manifest.write_text(json.dumps({"layers": [
        {"mediaType": "application/vnd.ollama.image.license", "digest": "sha256:lic"},
        {"mediaType": "application/vnd.ollama.image.model", "digest": "sha256:abc123"}]}))
    # The Hugging Face cache: a snapshot file is a symlink into blobs.
    hf_blob = _link(model, home / ".cache/huggingface/hub/models--org--Repo-GGUF/blobs/f00")
    snap = home / ".cache/huggingface/hub/models--org--Repo-GGUF/snapshots/abc/r-Q8_0.gguf"
    snap.parent.mkdir(parents=True)
    snap.symlink_to(hf_blob)
    gpt4all = _link(model, home / ".local/share/nomic.ai/GPT4All/orca-mini.gguf")

    found = {(m.app, m.name): m.path for m in scan_other_apps(home, environ={})}
    assert found == {
        ("LM Studio", "lmstudio-community/Qwen-GGUF/qwen-Q4_K_M.gguf"): lm,
        ("Ollama", "llama3.2:3b"): blob,
        ("Hugging Face cache", "org/Repo-GGUF/r-Q8_0.gguf"): snap,
        ("GPT4All", "orca-mini.gguf"): gpt4all,
    }


def test_an_empty_or_unreadable_home_finds_nothing(tmp_path: Path) -> None:
    assert scan_other_apps(tmp_path / "nobody", environ={}) == []
    locked = tmp_path / "locked"
    (locked / ".lmstudio/models").mkdir(parents=True)
    (locked / ".lmstudio").chmod(0)
    try:
        assert scan_other_apps(locked, environ={}) == []
    finally:
        (locked / ".lmstudio").chmod(0o755)


def test_environment_folders_are_honoured(tmp_path: Path) -> None:
    model = write_tiny_gguf(tmp_path / "model.gguf")
    custom = tmp_path / "elsewhere"
    _link(model, custom / "models--a--b/snapshots/1/b.gguf")
    found = scan_other_apps(tmp_path / "home", environ={"HF_HUB_CACHE": str(custom)})
    assert [(m.app, m.name) for m in found] == [("Hugging Face cache", "a/b/b.gguf")]


def test_gpu_layers_are_chosen_by_fit_only_on_a_gpu_build(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from desktop_app.core.catalogue import fit, library
    from desktop_app.core.config.settings import Settings

    model = write_tiny_gguf(tmp_path / "m.gguf", layers=10, data_bytes=1024 * 1024)
    settings = Settings()
    assert library.add_local_model(settings, model).config.gpu_layers == 0  # CPU build here
    monkeypatch.setattr(fit, "gpu_offload_supported", lambda: True)
    monkeypatch.setattr(fit, "free_vram", lambda: 10**12)
    other = write_tiny_gguf(tmp_path / "n.gguf", layers=10, data_bytes=1024 * 1024)
    assert library.add_local_model(settings, other).config.gpu_layers == 10
