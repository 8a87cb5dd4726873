"""End to end with a real Secret Service (gnome-keyring on a private D-Bus session).

The child process uses the real keyring backend that a Linux desktop user has: it stores a
key, saves settings, chats into the store and exports. The parent then greps the child's
whole home (including gnome-keyring's own files) and the app's folders for the key.
Skipped where gnome-keyring / dbus-run-session are not installed
(``apt-get install gnome-keyring dbus``).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

KEY = "sk-real-keyring-e2e-5d2c9a7f1b3e4d6c8a0f"

pytestmark = pytest.mark.skipif(
    not (shutil.which("gnome-keyring-daemon") and shutil.which("dbus-run-session")),
    reason="needs gnome-keyring and dbus-run-session")

CHILD = textwrap.dedent(f"""
    import asyncio, keyring
    from desktop_app.core.config import secrets
    from desktop_app.core.store.async_store import AsyncStore
    from desktop_app.core.store.exporting import export_json, export_markdown
    from desktop_app.core.config.settings import EndpointModelConfig, Settings, save_settings
    from desktop_app.core import paths

    ok, message = secrets.keyring_status()
    assert ok, message
    print("BACKEND", type(keyring.get_keyring()).__module__)
    secrets.set_api_key("hosted", "{KEY}")
    assert secrets.get_api_key("hosted") == "{KEY}"
    settings = Settings(endpoints=[EndpointModelConfig(
        name="hosted", base_url="https://api.example.com/v1", model="m",
        api_key_ref="hosted")])
    save_settings(settings)

    async def main():
        async with await AsyncStore.open() as store:
            conv = await store.create_conversation(model="hosted")
            await store.add_message(conv.id, "user", "hello")
            await store.add_message(conv.id, "assistant", "hi")
            detail = await store.load_conversation(conv.id)
        redact = secrets.known_secrets(settings)
        assert redact == ["{KEY}"]
        (paths.data_dir() / "export.json").write_text(export_json([detail], redact=redact))
        (paths.data_dir() / "export.md").write_text(export_markdown(detail, redact=redact))

    asyncio.run(main())
    print("DONE")
""")


def test_real_secret_service_keeps_the_key_off_every_file(tmp_path: Path) -> None:
    home, app_home = tmp_path / "home", tmp_path / "app"
    home.mkdir()
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DBUS_", "PYTHON_KEYRING"))}
    env.update(HOME=str(home), DESKTOP_APP_HOME=str(app_home),
               XDG_DATA_HOME=str(home / ".local" / "share"),
               XDG_CONFIG_HOME=str(home / ".config"))
    shell = ("printf pw | gnome-keyring-daemon --unlock --components=secrets >/dev/null && "
             f"exec {sys.executable} {script}")
    proc = subprocess.run(["dbus-run-session", "--", "sh", "-c", shell], env=env, check=False,
                          cwd=Path(__file__).resolve().parents[2], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0 and "DONE" in proc.stdout, proc.stderr[-2000:]
    assert "BACKEND keyring.backends.SecretService" in proc.stdout
    keyring_files = list((home / ".local" / "share" / "keyrings").glob("*"))
    assert keyring_files  # the key really went into gnome-keyring's (encrypted) store
    written = [p for p in tmp_path.rglob("*") if p.is_file() and p != script]
    assert any(p.name == "conversations.db" for p in written)
    assert any(p.name == "export.json" for p in written)
    leaks = [p for p in written if KEY.encode() in p.read_bytes()]
    assert leaks == []
