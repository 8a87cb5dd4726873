"""API keys: keyring only, a clear message without one, and never on disk or in exports."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import keyring
import pytest
from keyring.backend import KeyringBackend

from desktop_app.core import paths
from desktop_app.core.config import secrets
from desktop_app.core.config.settings import EndpointModelConfig, Settings, save_settings
from desktop_app.core.errors import KeyringUnavailableError
from desktop_app.core.store.async_store import AsyncStore
from desktop_app.core.store.conversation_store import ConversationStore
from desktop_app.core.store.exporting import export_json, export_markdown
from desktop_app.core.store.streaming import StreamingAnswerWriter

KEY = "sk-test-7f3a9c1e5b2d4f6a8c0e1b3d5f7a9c2e"


def _grep_tree(root: Path, needle: str) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file() and needle.encode() in p.read_bytes()]


def test_key_is_stored_in_the_keyring_and_read_back(memory_keyring) -> None:
    secrets.set_api_key("work", KEY)
    assert memory_keyring.store[(secrets.SERVICE, "work")] == KEY
    assert secrets.get_api_key("work") == KEY
    secrets.delete_api_key("work")
    assert secrets.get_api_key("work") is None
    assert secrets.keyring_status()[0] is True


def test_no_keyring_backend_says_so_and_offers_the_environment_variable() -> None:
    from keyring.backends.fail import Keyring as FailKeyring

    keyring.set_keyring(FailKeyring())
    ok, message = secrets.keyring_status()
    assert not ok and "No OS keyring" in message and "environment variable" in message
    with pytest.raises(KeyringUnavailableError) as info:
        secrets.set_api_key("my endpoint", KEY)
    assert "DESKTOP_APP_KEY_MY_ENDPOINT" in str(info.value)
    assert _grep_tree(paths.config_dir().parent, KEY) == []


def test_a_file_based_keyring_is_refused(app_home: Path) -> None:
    class PlaintextFileKeyring(KeyringBackend):
        """Stands in for keyrings.alt.file.PlaintextKeyring (which writes keys to a file)."""

        priority = 5  # type: ignore[assignment]

        def get_password(self, service: str, username: str) -> str | None:
            return None

        def set_password(self, service: str, username: str, password: str) -> None:
            (app_home / "data" / "keyring_pass.cfg").write_text(password)

        def delete_password(self, service: str, username: str) -> None:
            pass

    PlaintextFileKeyring.__module__ = "keyrings.alt.file"
    keyring.set_keyring(PlaintextFileKeyring())
    assert secrets.keyring_status()[0] is False
    with pytest.raises(KeyringUnavailableError, match="plain file"):
        secrets.set_api_key("x", KEY)
    assert _grep_tree(app_home, KEY) == []


def test_known_secrets_lists_configured_keys_for_redaction(
        monkeypatch: pytest.MonkeyPatch) -> None:
    secrets.set_api_key("a", KEY)
    monkeypatch.setenv("MY_KEY", "sk-env-key-000000000")
    settings = Settings(endpoints=[
        EndpointModelConfig(name="a", base_url="http://a/v1", model="m", api_key_ref="a"),
        EndpointModelConfig(name="b", base_url="http://b/v1", model="m", api_key_env="MY_KEY"),
        EndpointModelConfig(name="c", base_url="http://c/v1", model="m")])
    assert secrets.known_secrets(settings) == [KEY, "sk-env-key-000000000"]
    assert secrets.redact(f"x {KEY} y", [KEY]) == "x [REDACTED] y"


def test_no_key_anywhere_on_disk_after_using_the_app(app_home: Path) -> None:
    """Store a key, save settings, chat (streamed), export: grep every file for the key."""
    secrets.set_api_key("hosted", KEY)
    settings = Settings(endpoints=[EndpointModelConfig(
        name="hosted", base_url="https://api.example.com/v1", model="gpt-x",
        api_key_ref="hosted")], default_model="hosted")
    save_settings(settings)

    async def chat() -> str:
        async with await AsyncStore.open() as store:
            conv = await store.create_conversation(model="hosted")
            await store.add_message(conv.id, "user", "hello")
            async with StreamingAnswerWriter(store, conv.id, model="hosted") as w:
                w.append("Hi! How can I help?")
            return conv.id

    conv_id = asyncio.run(chat())
    with ConversationStore() as store:
        detail = store.load_conversation(conv_id)
        export_dir = paths.data_dir() / "exports"
        export_dir.mkdir()
        redact = secrets.known_secrets(settings)
        (export_dir / "chat.json").write_text(export_json([detail], redact=redact))
        (export_dir / "chat.md").write_text(export_markdown(detail, redact=redact))
    files = [p for p in app_home.rglob("*") if p.is_file()]
    assert any(p.name == "conversations.db" for p in files)
    assert any(p.name == "settings.json" for p in files)
    assert _grep_tree(paths.data_dir(), KEY) == []
    assert _grep_tree(paths.config_dir(), KEY) == []
    assert _grep_tree(app_home, KEY) == []
    assert "hosted" in (export_dir / "chat.json").read_text()  # the export did get written


def test_exports_redact_a_key_that_ended_up_in_the_conversation(
        store: ConversationStore) -> None:
    secrets.set_api_key("hosted", KEY)
    settings = Settings(endpoints=[EndpointModelConfig(
        name="hosted", base_url="https://h/v1", model="m", api_key_ref="hosted")])
    conv = store.create_conversation()
    store.add_message(conv.id, "user", f"my key is {KEY}, why does it fail?")
    answer = store.add_message(conv.id, "assistant", "Let me check the environment.")
    store.add_tool_step(answer.id, 1, "shell", {"cmd": "env"},
                        observation=f"OPENAI_API_KEY={KEY}\nHOME=/root")
    # A secret used as a dictionary key (found by an attack: keys were not scrubbed).
    store.add_tool_step(answer.id, 2, "lookup", {KEY: "value", "nested": {KEY: [KEY]}},
                        observation="ok")
    detail = store.load_conversation(conv.id)
    redact = secrets.known_secrets(settings)
    as_json = export_json([detail], redact=redact)
    as_md = export_markdown(detail, redact=redact)
    assert KEY not in as_json and KEY not in as_md
    assert "OPENAI_API_KEY=[REDACTED]" in as_md
    assert json.loads(as_json)["conversations"][0]["messages"][0]["content"] == \
        "my key is [REDACTED], why does it fail?"
