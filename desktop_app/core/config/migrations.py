"""Settings file migrations: registered functions from schema version N-1 to N on the raw dict.

A settings file records ``schema_version``; a file without one is version 0 (the flat
layout of the first releases, before settings were grouped). ``migrate_settings`` runs the
registered steps in order. Migrations never keep a secret in the file: a plaintext API key
found in an old file is handed back in ``MigrationContext.secrets`` so the caller can move
it into the keyring.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class MigrationContext:
    """Side results of migrating: notes for the user and secrets to move to the keyring."""

    notes: list[str] = field(default_factory=list)
    #: keyring entry name -> key found in plaintext in the old file (removed from the data).
    secrets: dict[str, str] = field(default_factory=dict)


SettingsMigration = Callable[[dict[str, Any], MigrationContext], dict[str, Any]]

#: target version -> function upgrading a raw dict from version-1 to version.
SETTINGS_MIGRATIONS: dict[int, SettingsMigration] = {}


def settings_migration(version: int) -> Callable[[SettingsMigration], SettingsMigration]:
    """Register ``fn`` as the upgrade of the raw settings dict to ``version``."""

    def register(fn: SettingsMigration) -> SettingsMigration:
        if version in SETTINGS_MIGRATIONS:
            raise ValueError(f"settings migration {version} registered twice")
        SETTINGS_MIGRATIONS[version] = fn
        return fn

    return register


def file_version(data: dict[str, Any]) -> int:
    """The schema version a raw settings dict declares (0 when it has none)."""
    version = data.get("schema_version", 0)
    return version if isinstance(version, int) and not isinstance(version, bool) else 0


def migrate_settings(data: dict[str, Any], target: int) -> tuple[dict[str, Any], MigrationContext]:
    """Upgrade a raw settings dict to ``target``; the input is not modified."""
    ctx = MigrationContext()
    result = copy.deepcopy(data)
    for version in range(file_version(data) + 1, target + 1):
        result = SETTINGS_MIGRATIONS[version](result, ctx)
        result["schema_version"] = version
    return result, ctx


# --- the migrations -------------------------------------------------------------------------

#: v0 flat keys that moved into groups in v1.
_V0_UI_KEYS = {"theme": "theme"}
_V0_TOOLS_KEYS = {"disabled_tools": "disabled", "workspace": "workspace",
                  "code_tool_enabled": "code_tool_enabled"}


@settings_migration(1)
def _v1_grouped_layout(data: dict[str, Any], ctx: MigrationContext) -> dict[str, Any]:
    """v0 (flat: ``model_path``, ``openai_*``, ``theme``...) -> v1 (grouped sections).

    Keys already in the v1 layout are kept, so a hand-written v1 file that merely lacks
    ``schema_version`` passes through unchanged.
    """
    out = {k: v for k, v in data.items()
           if not k.startswith("openai_") and k not in (
               "model_path", "context_size", "n_threads", "use_bundled_model",
               *_V0_UI_KEYS, *_V0_TOOLS_KEYS)}
    if "use_bundled_model" in data:
        out.setdefault("bundled", {})["enabled"] = bool(data["use_bundled_model"])
    if data.get("model_path"):
        path = str(data["model_path"])
        local: dict[str, Any] = {"name": Path(path).stem or "local-model", "path": path}
        for key in ("context_size", "n_threads"):
            if data.get(key) is not None:
                local[key] = data[key]
        out.setdefault("local_models", []).append(local)
        ctx.notes.append(f"The local model {path} moved to 'local_models'.")
    if data.get("openai_base_url") or data.get("openai_model"):
        endpoint: dict[str, Any] = {
            "name": "openai", "base_url": data.get("openai_base_url") or
            "https://api.openai.com/v1", "model": data.get("openai_model") or "gpt-4o-mini"}
        if data.get("openai_api_key"):
            endpoint["api_key_ref"] = "openai"
            ctx.secrets["openai"] = str(data["openai_api_key"])
        out.setdefault("endpoints", []).append(endpoint)
        ctx.notes.append("The OpenAI settings became the endpoint 'openai'.")
    elif data.get("openai_api_key"):
        ctx.secrets["openai"] = str(data["openai_api_key"])
    for old, new in _V0_UI_KEYS.items():
        if old in data:
            out.setdefault("ui", {})[new] = data[old]
    for old, new in _V0_TOOLS_KEYS.items():
        if old in data:
            out.setdefault("tools", {})[new] = data[old]
    return out
