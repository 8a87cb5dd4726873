"""Settings: versioned migrations, self-repair of damaged files with backups, atomic writes."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import keyring
import pytest

from desktop_app.core.config import secrets
from desktop_app.core.config.migrations import SETTINGS_MIGRATIONS, migrate_settings
from desktop_app.core.config.settings import (
    SCHEMA_VERSION,
    EndpointModelConfig,
    Settings,
    load_settings,
    load_settings_safe,
    save_settings,
    settings_path,
)
from desktop_app.core.errors import ConfigError

V0_FILE = {
    "model_path": "/models/mistral-7b.Q4_K_M.gguf",
    "context_size": 8192,
    "openai_base_url": "https://api.example.com/v1",
    "openai_model": "gpt-4o-mini",
    "openai_api_key": "sk-v0-plaintext-key-0123456789",
    "theme": "dark",
    "disabled_tools": ["shell"],
    "default_model": "mistral-7b.Q4_K_M",
}


def _backups(path: Path, tag: str) -> list[Path]:
    return sorted(path.parent.glob(f"{path.name}.{tag}-*"))


def test_missing_file_means_defaults_without_warning() -> None:
    settings, warning = load_settings_safe()
    assert settings == Settings() and warning is None


def test_save_and_load_round_trip_atomically() -> None:
    settings = Settings(default_model="x", endpoints=[EndpointModelConfig(
        name="x", base_url="http://h/v1", model="m", api_key_ref="x")])
    path = save_settings(settings)
    assert load_settings() == settings
    assert [p.name for p in path.parent.iterdir()] == ["settings.json"]  # no temp files left


def test_v0_flat_file_is_migrated_and_its_key_moved_to_the_keyring(memory_keyring) -> None:
    path = settings_path()
    path.write_text(json.dumps(V0_FILE))
    settings, warning = load_settings_safe()
    assert settings.schema_version == SCHEMA_VERSION
    assert [(m.name, m.path, m.context_size) for m in settings.local_models] == [
        ("mistral-7b.Q4_K_M", "/models/mistral-7b.Q4_K_M.gguf", 8192)]
    [endpoint] = settings.endpoints
    assert (endpoint.name, endpoint.base_url, endpoint.api_key_ref) == \
        ("openai", "https://api.example.com/v1", "openai")
    assert (settings.ui.theme, settings.tools.disabled) == ("dark", ["shell"])
    assert settings.default_model == "mistral-7b.Q4_K_M"
    assert keyring.get_password(secrets.SERVICE, "openai") == V0_FILE["openai_api_key"]
    assert warning and "upgraded from schema 0" in warning and "moved" in warning
    # The rewritten file and the kept backup of the old layout hold no key.
    for file in path.parent.iterdir():
        assert V0_FILE["openai_api_key"] not in file.read_text()
    [backup] = _backups(path, "v0")
    assert json.loads(backup.read_text())["model_path"] == V0_FILE["model_path"]
    assert json.loads(path.read_text())["schema_version"] == SCHEMA_VERSION
    # Loading again: nothing left to migrate.
    assert load_settings_safe() == (settings, None)


def test_v0_key_plus_an_invalid_value_leaves_no_backup_with_the_key(memory_keyring) -> None:
    """Found by an attack: the 'bad' backup of a migrated file kept the key in plain text."""
    path = settings_path()
    path.write_text(json.dumps({**V0_FILE, "theme": "purple-with-dots"}))
    _settings, warning = load_settings_safe()
    assert warning and "invalid" in warning
    assert keyring.get_password(secrets.SERVICE, "openai") == V0_FILE["openai_api_key"]
    files = list(path.parent.iterdir())
    assert len(files) >= 3  # settings, the v0 backup, the bad backup
    for file in files:
        assert V0_FILE["openai_api_key"] not in file.read_text(), file.name


def test_v0_key_without_a_keyring_is_not_kept_and_env_route_is_offered(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from keyring.backends.fail import Keyring as FailKeyring

    keyring.set_keyring(FailKeyring())
    settings_path().write_text(json.dumps(V0_FILE))
    settings, warning = load_settings_safe()
    assert settings.endpoints[0].api_key_env == "DESKTOP_APP_KEY_OPENAI"
    assert warning and "DESKTOP_APP_KEY_OPENAI" in warning and "no OS keyring" in warning
    for file in settings_path().parent.iterdir():
        assert V0_FILE["openai_api_key"] not in file.read_text()
    monkeypatch.setenv("DESKTOP_APP_KEY_OPENAI", "sk-from-env")
    assert secrets.get_api_key(settings.endpoints[0].api_key_ref,
                               settings.endpoints[0].api_key_env) == "sk-from-env"


def test_every_registered_migration_chains_to_the_current_version() -> None:
    assert sorted(SETTINGS_MIGRATIONS) == list(range(1, SCHEMA_VERSION + 1))
    migrated, _ = migrate_settings({}, SCHEMA_VERSION)
    assert Settings.model_validate(migrated).schema_version == SCHEMA_VERSION


def test_unversioned_file_in_the_current_layout_passes_through() -> None:
    settings_path().write_text(json.dumps({"ui": {"theme": "light"}, "default_model": "q"}))
    settings, _ = load_settings_safe()
    assert (settings.ui.theme, settings.default_model) == ("light", "q")


def test_broken_json_falls_back_to_defaults_keeping_the_bad_file() -> None:
    path = settings_path()
    path.write_text('{"default_model": "x",,, oops')
    settings, warning = load_settings_safe()
    assert settings == Settings()
    assert warning and "not valid JSON" in warning and "bad-" in warning
    [backup] = _backups(path, "bad")
    assert backup.read_text() == '{"default_model": "x",,, oops'
    assert not path.exists()  # the next start is clean
    assert load_settings_safe() == (Settings(), None)


def test_wrong_types_reset_only_the_invalid_parts() -> None:
    path = settings_path()
    original = {
        "schema_version": 1, "default_model": "good-endpoint",
        "ui": {"theme": "purple"},
        "bundled": {"context_size": "lots", "n_threads": 2},
        "endpoints": [
            {"name": "broken", "model": "m"},  # base_url missing
            {"name": "good-endpoint", "base_url": "http://h/v1", "model": "m",
             "timeout": "soon"},
        ],
        "roles": {"fast": 3, "general": "good-endpoint"},
    }
    path.write_text(json.dumps(original))
    settings, warning = load_settings_safe()
    assert settings.default_model == "good-endpoint"
    assert [e.name for e in settings.endpoints] == ["good-endpoint"]
    assert settings.endpoints[0].timeout == 120.0
    assert (settings.ui.theme, settings.bundled.context_size, settings.bundled.n_threads) == \
        ("system", 8192, 2)
    assert settings.roles == {"general": "good-endpoint"}
    assert warning is not None
    for fragment in ("ui.theme", "bundled.context_size", "endpoints.0", "roles.fast"):
        assert fragment in warning
    [backup] = _backups(path, "bad")
    assert json.loads(backup.read_text()) == original
    assert load_settings_safe() == (settings, None)  # the repaired file was saved


def test_warnings_never_echo_values(memory_keyring) -> None:
    settings_path().write_text(json.dumps({"schema_version": 1,
                                           "default_model": ["sk-secret-value-123456"]}))
    _, warning = load_settings_safe()
    assert warning and "default_model" in warning and "sk-secret" not in warning


def test_file_from_a_newer_version_is_loaded_with_a_warning() -> None:
    settings_path().write_text(json.dumps({"schema_version": 99, "ui": {"theme": "dark"},
                                           "future_feature": {"x": 1}}))
    settings, warning = load_settings_safe()
    assert settings.ui.theme == "dark" and warning and "newer desktop-app" in warning


def test_load_settings_repairs_and_logs_but_strict_mode_raises(
        caplog: pytest.LogCaptureFixture) -> None:
    settings_path().write_text('{"ui": {"theme": 5}}')
    with pytest.raises(ConfigError, match="ui.theme"):
        load_settings(strict=True)
    assert settings_path().read_text() == '{"ui": {"theme": 5}}'  # strict changes nothing
    with caplog.at_level(logging.WARNING):
        assert load_settings().ui.theme == "system"
    assert "ui.theme" in caplog.text
    settings_path().write_text("[1, 2]")
    assert load_settings() == Settings()


def test_backup_that_cannot_be_written_does_not_stop_the_start(app_home: Path) -> None:
    # A name so long that "<name>.bad-<timestamp>" exceeds the file-name limit: a real
    # OSError from the file system (works as root too, unlike a read-only folder).
    path = settings_path().with_name("s" * 240 + ".json")
    path.write_text("{broken")
    settings, warning = load_settings_safe(path)
    assert settings == Settings()
    assert warning and "not valid JSON" in warning and "no backup possible" in warning
