"""The files behind settings.json: written atomically, a damaged or invalid one kept
beside it (``settings.bad-<time>.json``) before it is repaired, and API keys found in it
moved to the keyring and out of every copy."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from desktop_app.core.errors import SecretsError


def store_migrated_secrets(data: dict[str, Any], secrets: dict[str, str]) -> list[str]:
    """Move plaintext keys from an old file into the keyring (or point at an env variable)."""
    from desktop_app.core.config.secrets import env_var_for, set_api_key

    notes = []
    for ref, key in secrets.items():
        try:
            set_api_key(ref, key)
            notes.append(f"The API key '{ref}' was moved from the settings file into the "
                         "OS keyring.")
        except SecretsError:
            var = env_var_for(ref)
            for endpoint in data.get("endpoints") or []:
                if isinstance(endpoint, dict) and endpoint.get("api_key_ref") == ref:
                    endpoint["api_key_env"] = var
            notes.append(f"The API key '{ref}' was removed from the settings file, but no OS "
                         f"keyring is available to keep it: set the environment variable "
                         f"{var} to the key.")
    return notes


def without_secrets(text: str, secrets: dict[str, str]) -> str:
    for key in secrets.values():
        if key:
            text = text.replace(key, "[moved to the keyring]")
    return text


def _stamp() -> str:
    return time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())


def _free_name(path: Path, tag: str) -> Path:
    candidate = path.with_name(f"{path.name}.{tag}-{_stamp()}")
    n = 1
    while candidate.exists():
        n += 1
        candidate = path.with_name(f"{path.name}.{tag}-{_stamp()}-{n}")
    return candidate


class Kept:
    """Where a backup went, for the message; ``name`` explains if it could not be made."""

    def __init__(self, path: Path | None, error: OSError | None = None) -> None:
        self.path = path
        self.name = path.name if path is not None else f"nothing (no backup possible: {error})"


def move_aside(path: Path, tag: str) -> Kept:
    try:
        backup = _free_name(path, tag)
        path.replace(backup)
    except OSError as exc:  # a read-only config folder must not stop the app
        return Kept(None, exc)
    return Kept(backup)


def write_backup(path: Path, tag: str, text: str) -> Kept:
    try:
        backup = _free_name(path, tag)
        atomic_write(backup, text)
    except OSError as exc:
        return Kept(None, exc)
    return Kept(backup)


def atomic_write(path: Path, text: str) -> None:
    """Write to a temporary file, flush it to disk, then rename over ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        tmp.replace(path)
    finally:
        tmp.unlink(missing_ok=True)
