"""User settings: pydantic models stored as JSON in the platform config directory.

Secrets never live here: an endpoint names its key (``api_key_ref``), and the key itself is
read from the OS keyring or an environment variable (see ``core/config/secrets.py``).

Loading never stops the app from starting. ``load_settings_safe()`` returns the settings
and a warning for the user: an older file is migrated (``config/migrations.py``) and
rewritten; a file that is not JSON is moved aside as ``settings.json.bad-<timestamp>`` and
defaults are used; a file with wrong values keeps every valid part, resets the invalid ones
and is rewritten, the original kept as ``settings.json.bad-<timestamp>``. ``load_settings()``
does the same and logs the warning (``strict=True`` raises ``ConfigError`` instead, for
callers that must not repair anything, such as a settings check).
"""

from __future__ import annotations

import errno
import json
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError

from desktop_app.core import paths
from desktop_app.core.config.migrations import file_version, migrate_settings
from desktop_app.core.config.settings_files import (
    atomic_write,
    move_aside,
    store_migrated_secrets,
    without_secrets,
    write_backup,
)
from desktop_app.core.errors import ConfigError

log = logging.getLogger(__name__)

SCHEMA_VERSION = 1
BUNDLED_MODEL_NAME = "qwen2.5-coder-0.5b"


class BundledModelConfig(BaseModel):
    """The small local model that ships with the app (assembled on first use)."""

    enabled: bool = True
    name: str = BUNDLED_MODEL_NAME
    context_size: int = 8192
    n_threads: int | None = None
    constrained_json: bool = False
    #: Use the tool-call format the model was trained with (its chat template's).
    native_tools: bool = True
    roles: list[str] = Field(default_factory=lambda: ["general", "fast"])


class LocalModelConfig(BaseModel):
    """A GGUF file the user added."""

    name: str
    path: str
    context_size: int = 4096
    n_threads: int | None = None
    constrained_json: bool = False
    #: Use the tool-call format the model was trained with, when its template has one.
    native_tools: bool = True
    roles: list[str] = Field(default_factory=list)
    chat_format: str | None = None
    #: Layers offloaded to a GPU (a GPU build of llama.cpp only; 0 = run on the CPU).
    gpu_layers: int = Field(default=0, ge=0, le=1000)


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


class AssistantConfig(BaseModel):
    """A named preset: system prompt, model, tools, temperature, context size."""

    name: str = Field(min_length=1, max_length=60)
    description: str = ""
    #: Empty: the app's default system prompt.
    system_prompt: str = ""
    #: A model name; None: the chat's own choice.
    model: str | None = None
    #: Tool names it may use; None: every enabled tool; []: none.
    tools: list[str] | None = None
    temperature: float | None = Field(default=None, ge=0.0, le=2.0)
    #: Tokens of context to use at most (below the model's own); None: all of it.
    context_size: int | None = Field(default=None, ge=512)
    #: Shipped with the app (not stored in settings).
    builtin: bool = Field(default=False, exclude=True)


class ToolsSettings(BaseModel):
    disabled: list[str] = Field(default_factory=list)
    workspace: str | None = None
    code_tool_enabled: bool = False
    always_allow: list[str] = Field(default_factory=list)
    #: Seconds before any one tool call is stopped (a hung tool must not hang the run).
    timeout_seconds: float = Field(default=120.0, ge=1.0, le=3600.0)


class McpServerConfig(BaseModel):
    name: str
    transport: Literal["stdio", "http"] = "stdio"
    command: list[str] = Field(default_factory=list)
    url: str | None = None
    enabled: bool = True
    env: dict[str, str] = Field(default_factory=dict)
    #: A stdio server may use the network. Off (the default): it runs in a network
    #: namespace of its own, so it can neither reach nor send anything (core/sandbox).
    network: bool = False


class UiSettings(BaseModel):
    theme: Literal["light", "dark", "system"] = "system"


class PrivacySettings(BaseModel):
    #: The offline lock: nothing leaves the computer (core/egress); loopback stays allowed.
    offline: bool = False


class ApiServerSettings(BaseModel):
    """The local OpenAI-compatible API server of the window (``desktop-app serve`` takes
    its own flags)."""

    #: Started with the window (the status bar's switch remembers it).
    enabled: bool = False
    port: int = Field(default=8765, ge=1, le=65535)
    #: Hosted endpoints served too (their provider sees those requests); none by default.
    hosted: list[str] = Field(default_factory=list)


class VoiceSettings(BaseModel):
    """Offline voice in the window."""

    #: Read every answer aloud as it streams.
    read_answers: bool = False
    #: Send the dictated message as soon as the user stops speaking.
    send_on_stop: bool = False
    #: Dictation language ("en", "de", …; None: detected).
    language: str | None = None
    speed: float = Field(default=1.0, ge=0.5, le=2.0)


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
    #: The user's own assistants (the built-in ones come from resources/assistants.json).
    assistants: list[AssistantConfig] = Field(default_factory=list)
    ui: UiSettings = Field(default_factory=UiSettings)
    privacy: PrivacySettings = Field(default_factory=PrivacySettings)
    api_server: ApiServerSettings = Field(default_factory=ApiServerSettings)
    voice: VoiceSettings = Field(default_factory=VoiceSettings)


def settings_path() -> Path:
    return paths.config_dir() / "settings.json"


def _loads(text: str) -> Any:
    """``json.loads`` that reports absurd nesting as invalid JSON (not a RecursionError)."""
    try:
        return json.loads(text)
    except RecursionError:
        raise ValueError("nested too deeply to be settings") from None


def load_settings(path: Path | None = None, *, strict: bool = False) -> Settings:
    """Read settings; a missing file means defaults.

    By default a damaged or outdated file is repaired as ``load_settings_safe`` describes
    and the warning is logged, so the app always starts. ``strict=True`` changes nothing on
    disk and raises ``ConfigError`` for a file that is not valid as it stands.
    """
    path = path or settings_path()
    if strict:
        if not path.exists():
            return Settings()
        try:
            data = _loads(path.read_text(encoding="utf-8"))
            if isinstance(data, dict) and file_version(data) < SCHEMA_VERSION:
                data, _ = migrate_settings(data, SCHEMA_VERSION)
            return Settings.model_validate(data)
        except ValidationError as exc:
            raise ConfigError(f"The settings file {path} has invalid values: "
                              f"{describe_validation_error(exc)}",
                              hint="Fix or delete it to start from defaults.") from exc
        except (OSError, ValueError) as exc:
            raise ConfigError(f"The settings file {path} could not be read: {exc}",
                              hint="Fix or delete it to start from defaults.") from exc
    settings, warning = load_settings_safe(path)
    if warning:
        log.warning("%s", warning)
    return settings


def load_settings_safe(path: Path | None = None) -> tuple[Settings, str | None]:
    """The settings and a message for the user (None when all was well). Never raises."""
    path = path or settings_path()
    try:
        if not path.exists():
            return Settings(), None
        raw_text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return Settings(), (f"The settings file {path} could not be read ({exc}); using "
                            "defaults for now.")
    try:
        data = _loads(raw_text)
    except ValueError as exc:
        backup = move_aside(path, "bad")
        return Settings(), (f"The settings file {path} is not valid JSON ({exc.args[0]}). "
                            f"Starting from default settings; the damaged file was kept as "
                            f"{backup.name}.")
    if not isinstance(data, dict):
        backup = move_aside(path, "bad")
        return Settings(), (f"The settings file {path} does not hold a settings object. "
                            f"Starting from default settings; the file was kept as "
                            f"{backup.name}.")
    notes: list[str] = []
    version = file_version(data)
    changed = False
    moved_secrets: dict[str, str] = {}  # keys a migration moved to the keyring
    if version > SCHEMA_VERSION:
        notes.append(f"The settings file was written by a newer desktop-app (schema "
                     f"{version}); settings this version does not know are ignored.")
    elif version < SCHEMA_VERSION:
        data, ctx = migrate_settings(data, SCHEMA_VERSION)
        notes += ctx.notes
        notes += store_migrated_secrets(data, ctx.secrets)
        moved_secrets = ctx.secrets
        backup = write_backup(path, f"v{version}", without_secrets(raw_text, ctx.secrets))
        notes.append(f"Settings were upgraded from schema {version} to {SCHEMA_VERSION} "
                     f"(the old file is kept as {backup.name}).")
        changed = True
    settings, problems = _validate_salvaging(data)
    if problems:
        # The keys left the file for the keyring: no backup may hold them in plain text.
        backup = write_backup(path, "bad", without_secrets(raw_text, moved_secrets))
        notes.append(f"Some settings in {path} were invalid and were reset to their defaults: "
                     f"{'; '.join(problems)}. Everything else was kept; the original file "
                     f"is kept as {backup.name}.")
        # Rewrite only if the original is safe in its backup (else it stays as it is and
        # the repair is redone at the next start).
        changed = changed or backup.path is not None
    if changed:
        try:
            save_settings(settings, path)
        except ConfigError as exc:
            notes.append(f"The repaired settings could not be saved ({exc}).")
    return settings, " ".join(notes) or None


def update_saved_settings(change: Callable[[Settings], bool]) -> None:
    """Apply ``change`` to settings.json as it is now and save it if ``change`` says it
    changed something: read just before writing, so a change saved meanwhile (the
    settings dialog) is not overwritten."""
    stored = load_settings()
    if change(stored):
        save_settings(stored)


def save_settings(settings: Settings, path: Path | None = None) -> Path:
    """Write settings atomically (a crash never leaves a half-written file). A file that
    cannot be written (disk full, read-only folder) raises ``ConfigError``; the settings
    saved before stay as they were."""
    path = path or settings_path()
    try:
        atomic_write(path, settings.model_dump_json(indent=2))
    except OSError as exc:
        full = exc.errno == errno.ENOSPC
        raise ConfigError(
            f"Settings could not be saved to {path}: "
            f"{'the disk is full' if full else exc.strerror or exc}.",
            hint=("Free some space on the disk and save again; " if full else
                  "Check that the folder is writable and save again; ")
            + "the settings saved before are unchanged.") from exc
    return path


def describe_validation_error(exc: ValidationError) -> str:
    """Field paths and reasons, without the offending values (they might be keys)."""
    return "; ".join(f"{'.'.join(str(p) for p in err['loc']) or '(root)'}: {err['msg']}"
                     for err in exc.errors(include_input=False, include_url=False))


# --- repair helpers --------------------------------------------------------------------------

def _validate_salvaging(data: dict[str, Any]) -> tuple[Settings, list[str]]:
    """Validate; on errors drop the smallest invalid part (a key or list item) and retry."""
    problems: list[str] = []
    for _ in range(100):
        try:
            return Settings.model_validate(data), problems
        except ValidationError as exc:
            err = exc.errors(include_input=False, include_url=False)[0]
            target = list(err["loc"])
            if err["type"] == "missing":
                # A required field is missing: drop the entry that needs it, i.e. the
                # nearest enclosing list item (one broken endpoint must not take the other
                # endpoints with it), else the whole top-level section.
                target = target[:-1]
                list_cut = max((i for i, p in enumerate(target) if isinstance(p, int)),
                               default=None)
                target = target[:list_cut + 1] if list_cut is not None else target[:1]
            # Otherwise drop just the invalid value: its default takes its place.
            where = ".".join(str(p) for p in target) or "(all settings)"
            problems.append(f"{where} ({err['msg']})")
            if not target or not _delete_path(data, target):
                return Settings(), problems
    return Settings(), problems


def _delete_path(data: Any, loc: list[Any]) -> bool:
    parent = data
    for part in loc[:-1]:
        try:
            parent = parent[part]
        except (KeyError, IndexError, TypeError):
            return False
    try:
        del parent[loc[-1]]
    except (KeyError, IndexError, TypeError):
        return False
    return True
