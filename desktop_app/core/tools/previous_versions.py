"""One earlier version of each workspace file that ``write_file`` replaced, so a person can
take the replacement back from the call's card.

Kept outside the workspace (in the app's data folder: the model's file tools cannot read
or change it), one per file: the version before the latest replacement. Restoring swaps
the two, so a restore can itself be undone. Files larger than ``MAX_KEPT_BYTES`` are not
kept (the confirmation already said their content would be lost).
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from pathlib import Path

from desktop_app.core import paths
from desktop_app.core.errors import ToolError
from desktop_app.core.tools.sandbox import Workspace

MAX_KEPT_BYTES = 20 * 1024 * 1024


def _slot(workspace: Workspace, relative: str) -> Path:
    key = f"{Path(workspace.root).resolve()}\0{relative}".encode()
    return paths.data_dir() / "previous-versions" / hashlib.sha256(key).hexdigest()[:32]


def _relative(workspace: Workspace, path: str) -> str:
    return str(workspace.relative(workspace.resolve(path, must_exist=False)))


def keep(workspace: Workspace, path: str) -> bool:
    """Keep the current content of workspace file ``path`` before it is replaced (blocking).
    False when there is nothing to keep or it is too large."""
    relative = _relative(workspace, path)
    try:
        data, cut = workspace.read_bytes(relative, max_bytes=MAX_KEPT_BYTES)
    except (ToolError, OSError):
        return False
    if cut:
        return False
    slot = _slot(workspace, relative)
    slot.parent.mkdir(parents=True, exist_ok=True)
    _write_atomic(slot.with_suffix(".bin"), data)
    _write_atomic(slot.with_suffix(".json"), json.dumps(
        {"path": relative, "saved_at": time.time(), "size": len(data)}).encode())
    return True


def kept(workspace: Workspace, path: str) -> dict[str, object] | None:
    """What is kept for ``path`` (its path, time, size), or None."""
    try:
        slot = _slot(workspace, _relative(workspace, path))
        meta = json.loads(slot.with_suffix(".json").read_text(encoding="utf-8"))
    except (ToolError, OSError, ValueError):
        return None
    return meta if isinstance(meta, dict) and slot.with_suffix(".bin").is_file() else None


def restore(workspace: Workspace, path: str) -> str:
    """Put the kept version of ``path`` back (blocking); the content it replaces is kept
    in its place. Returns the file's workspace path. Raises ``ToolError``."""
    relative = _relative(workspace, path)
    slot = _slot(workspace, relative)
    try:
        data = slot.with_suffix(".bin").read_bytes()
    except OSError as exc:
        raise ToolError(f"No earlier version of '{relative}' is kept.",
                        hint="Only the version before the last replacement is kept.") from exc
    keep(workspace, relative)  # the current content becomes the kept one (undo)
    fd = workspace.open_fd(relative, os.O_WRONLY | os.O_CREAT, create=True)
    with os.fdopen(fd, "wb") as handle:
        handle.truncate(0)
        handle.write(data)
    return relative


def _write_atomic(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        tmp.write_bytes(data)
        tmp.replace(path)
    finally:
        tmp.unlink(missing_ok=True)
