"""Hostile GGUF headers and model folders are refused at once, never walked for minutes,
recursed into until Python gives up, opened when they are FIFOs, or followed out of
Ollama's blobs folder."""

from __future__ import annotations

import json
import os
import struct
import threading
from pathlib import Path

import pytest
from hub_fakes import write_tiny_gguf

from desktop_app.core.catalogue.gguf_meta import GgufError, read_gguf
from desktop_app.core.catalogue.scan import scan_other_apps


def _string(text: str) -> bytes:
    raw = text.encode()
    return struct.pack("<Q", len(raw)) + raw


def _header(path: Path, kvs: bytes, kv_count: int, tensor_count: int = 0) -> Path:
    path.write_bytes(b"GGUF" + struct.pack("<IQQ", 3, tensor_count, kv_count) + kvs
                     + b"\0" * 64)
    return path


def _finishes(fn: object, seconds: float = 10.0) -> BaseException | None:
    """Run ``fn`` in a thread; fail the test if it is still running after ``seconds``."""
    outcome: list[BaseException | None] = []

    def run() -> None:
        try:
            fn()  # type: ignore[operator]
            outcome.append(None)
        except BaseException as exc:  # noqa: BLE001 - handed back to the test
            outcome.append(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    assert outcome, f"still running after {seconds} s"
    return outcome[0]


def test_arrays_nested_200k_deep_are_refused_not_a_recursion_error(tmp_path: Path) -> None:
    kvs = _string("evil") + struct.pack("<I", 9) + struct.pack("<IQ", 9, 1) * 200_000
    path = _header(tmp_path / "deep.gguf", kvs, kv_count=1)
    with pytest.raises(GgufError, match="nests arrays"):
        read_gguf(path)


@pytest.mark.parametrize(("kv_count", "tensor_count"), [(1 << 40, 0), (1, 1 << 40)])
def test_absurd_key_and_tensor_counts_are_refused_at_once(
        tmp_path: Path, kv_count: int, tensor_count: int) -> None:
    kvs = _string("general.architecture") + struct.pack("<I", 8) + _string("llama")
    path = _header(tmp_path / "counts.gguf", kvs, kv_count, tensor_count)
    with pytest.raises(GgufError, match="more than any model has"):
        read_gguf(path)


def test_a_split_count_of_four_billion_is_not_believed(tmp_path: Path) -> None:
    kvs = (_string("general.architecture") + struct.pack("<I", 8) + _string("llama")
           + _string("split.count") + struct.pack("<I", 4) + struct.pack("<I", 4_000_000_000))
    path = _header(tmp_path / "model-00001-of-00002.gguf", kvs, kv_count=2)
    result: list[object] = []
    error = _finishes(lambda: result.append(read_gguf(path)))
    assert error is None
    assert result[0].split_parts == []  # type: ignore[attr-defined]


def test_a_real_split_still_finds_its_parts(tmp_path: Path) -> None:
    path = write_tiny_gguf(tmp_path / "m-00001-of-00003.gguf", extra={"split.count": 3})
    assert [p.name for p in read_gguf(path).split_parts] == [
        "m-00002-of-00003.gguf", "m-00003-of-00003.gguf"]


def test_a_fifo_named_gguf_is_neither_opened_nor_listed(tmp_path: Path) -> None:
    home = tmp_path / "home"
    models = home / ".cache" / "lm-studio" / "models" / "me" / "repo"
    models.mkdir(parents=True)
    fifo = models / "x.gguf"
    os.mkfifo(fifo)
    write_tiny_gguf(models / "real.gguf")
    try:
        error = _finishes(lambda: read_gguf(fifo))
        assert isinstance(error, GgufError) and "not a regular file" in str(error)
        found: list[object] = []
        assert _finishes(lambda: found.extend(scan_other_apps(home, environ={}))) is None
        assert [m.path.name for m in found] == ["real.gguf"]  # type: ignore[attr-defined]
    finally:
        # Unblock a reader left waiting on the FIFO if the code under test opened it.
        fd = os.open(fifo, os.O_RDWR | os.O_NONBLOCK)
        os.close(fd)


def test_an_ollama_digest_cannot_lead_out_of_the_blobs_folder(tmp_path: Path) -> None:
    home = tmp_path / "home"
    folder = home / ".ollama" / "models"
    manifest = folder / "manifests" / "registry.ollama.ai" / "library" / "evil" / "latest"
    manifest.parent.mkdir(parents=True)
    (folder / "blobs").mkdir()
    secret = folder.parent / "secret.gguf"
    write_tiny_gguf(secret)
    good = write_tiny_gguf(folder / "blobs" / ("sha256-" + "ab" * 32))
    layer = "application/vnd.ollama.image.model"
    manifest.write_text(json.dumps({"layers": [
        {"mediaType": layer, "digest": "../../secret.gguf"},
        {"mediaType": layer, "digest": "sha256:" + "ab" * 32}]}))
    found = scan_other_apps(home, environ={})
    assert [m.path for m in found] == [good]
