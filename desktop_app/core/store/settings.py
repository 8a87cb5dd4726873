"""User settings: pydantic models stored as JSON in the platform config directory.

Secrets never live here: an endpoint names its key (``api_key_ref``), and the key itself is
read from the OS keyring or an environment variable (see ``core/store/secrets.py``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field, ValidationError

from desktop_app.core import paths
from desktop_app.core.errors import ConfigError

SCHEMA_VERSION = 1
BUNDLED_MODEL_NAME = "qwen2.5-coder-0.5b"


class BundledModelConfig(BaseModel):
    """The small local model that ships with the app (assembled on first use)."""

    enabled: bool = True
    name: str = BUNDLED_MODEL_NAME
    context_size: int = 8192
    n_threads: int | None = None
    constrained_json: bool = False
    roles: list[str] = Field(default_factory=lambda: ["general", "fast"])


class LocalModelConfig(BaseModel):
    """A GGUF file the user added."""

    name: str
    path: str
    context_size: int = 4096
    n_threads: int | None = None
    constrained_json: bool = False
    roles: list[str] = Field(default_factory=list)
    chat_format: str | None = None


class EndpointModelConfig(BaseModel):
    """A model behind an OpenAI-compatible API."""

    name: str
    base_url: str
    model: str
    #: Keyring entry holding the key (service "desktop-app"); None means no key is needed.
    api_key_ref: str | None = None
    #: Alternative to the keyring: read the key from this environment variable.
    api_key_env: str | None = None
    context_size: int = 32768
    tool_call: bool = True
    json_mode: bool = True
    thinking: bool = False
    vision: bool = False
    timeout: float = 120.0
    roles: list[str] = Field(default_factory=list)


class ToolsSettings(BaseModel):
    disabled: list[str] = Field(default_factory=list)
    workspace: str | None = None
    code_tool_enabled: bool = False
    always_allow: list[str] = Field(default_factory=list)


class McpServerConfig(BaseModel):
    name: str
    transport: Literal["stdio", "http"] = "stdio"
    command: list[str] = Field(default_factory=list)
    url: str | None = None
    enabled: bool = True
    env: dict[str, str] = Field(default_factory=dict)


class UiSettings(BaseModel):
    theme: Literal["light", "dark", "system"] = "system"


class Settings(BaseModel):
    """Everything the user can configure."""

    schema_version: int = SCHEMA_VERSION
    bundled: BundledModelConfig = Field(default_factory=BundledModelConfig)
    local_models: list[LocalModelConfig] = Field(default_factory=list)
    endpoints: list[EndpointModelConfig] = Field(default_factory=list)
    #: Name of the default model; None means the bundled model (or the first configured one).
    default_model: str | None = None
    #: Role name -> model name; overrides the per-model ``roles`` lists.
    roles: dict[str, str] = Field(default_factory=dict)
    tools: ToolsSettings = Field(default_factory=ToolsSettings)
    mcp_servers: list[McpServerConfig] = Field(default_factory=list)
    ui: UiSettings = Field(default_factory=UiSettings)


def settings_path() -> Path:
    return paths.config_dir() / "settings.json"


def load_settings(path: Path | None = None) -> Settings:
    """Read settings; a missing file means defaults."""
    path = path or settings_path()
    if not path.exists():
        return Settings()
    try:
        return Settings.model_validate(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError, ValidationError) as exc:
        raise ConfigError(f"The settings file {path} could not be read: {exc}",
                          hint="Fix or delete it to start from defaults.") from exc


def save_settings(settings: Settings, path: Path | None = None) -> Path:
    """Write settings atomically (a crash never leaves a half-written file)."""
    path = path or settings_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(settings.model_dump_json(indent=2), encoding="utf-8")
    tmp.replace(path)
    return path
