"""The settings dialog: API keys go to the keyring only, validation, endpoint tools."""

from __future__ import annotations

import pytest
from keyring.backends.fail import Keyring as FailKeyring
from ui_helpers import make_window

from desktop_app.core.config.settings import EndpointModelConfig, Settings, load_settings
from desktop_app.core.llm.testing import ScriptedLLM
from desktop_app.ui.settings_dialog import SettingsDialog

pytestmark = pytest.mark.gui

SECRET = "sk-test-SECRET-4242-do-not-store"


def _fill_endpoint(dialog: SettingsDialog, *, name: str = "lab", base_url: str,
                   model: str = "some-model", key: str = "") -> None:
    editor = dialog.endpoints
    editor.add_button.click()
    editor.name.setText(name)
    editor.base_url.setText(base_url)
    editor.model.setEditText(model)
    editor.api_key.setText(key)


def test_api_key_is_saved_to_the_keyring_and_never_to_disk(qtbot, loop, app_home,
                                                            memory_keyring) -> None:
    async def scenario():
        window = await make_window(qtbot, ScriptedLLM(model_id="m"))
        window.ctx.persist_settings = True
        window.open_settings()
        dialog = window.settings_dialog
        _fill_endpoint(dialog, base_url="https://api.example.com/v1", key=SECRET)
        assert dialog.save()
        await dialog.saving
        await window.controller.wait_idle()
        for task in list(window._tasks):
            await task
        return window

    window = loop.run_until_complete(scenario())
    assert memory_keyring.store[("desktop-app", "endpoint:lab")] == SECRET
    saved = load_settings()
    assert [(e.name, e.api_key_ref) for e in saved.endpoints] == [("lab", "endpoint:lab")]
    files = [p for p in app_home.rglob("*") if p.is_file()]
    assert any(p.name == "settings.json" for p in files)
    for path in files:
        assert SECRET.encode() not in path.read_bytes(), f"key leaked into {path}"
    # the new endpoint is offered in the model picker right away
    assert "lab" in [window.picker.combo.itemData(i) for i in range(window.picker.combo.count())]


def test_no_keyring_backend_gives_a_clear_message_and_saves_nothing(qtbot, loop) -> None:
    import keyring

    keyring.set_keyring(FailKeyring())  # the memory_keyring fixture restores it afterwards
    dialog = SettingsDialog(Settings())
    qtbot.addWidget(dialog)
    saved: list[Settings] = []
    dialog.saved.connect(saved.append)
    _fill_endpoint(dialog, base_url="https://api.example.com/v1", key=SECRET)

    async def scenario() -> None:
        assert dialog.save()
        await dialog.saving
        text = dialog.error.text()
        assert "keyring" in text.lower() and "environment variable" in text
        assert saved == [] and not dialog.error.isHidden()
        # Without a keyring the key field takes nothing, and the rejected key is gone: the
        # next Save keeps every other change instead of failing again until Cancel.
        assert dialog.endpoints.api_key.isReadOnly() and dialog.endpoints.api_key.text() == ""
        dialog.endpoints.api_key_env.setText("LAB_API_KEY")
        assert dialog.save()
        await dialog.saving

    loop.run_until_complete(scenario())
    [settings] = saved
    assert [(e.name, e.api_key_ref, e.api_key_env) for e in settings.endpoints] == [
        ("lab", None, "LAB_API_KEY")]


def test_the_keyring_is_used_off_the_qt_thread_and_the_window_stays_responsive(
        qtbot, loop, memory_keyring) -> None:
    """A locked keyring waits for its unlock prompt: the window must not freeze meanwhile
    (issue 25)."""
    import threading
    import time

    from PySide6.QtCore import QTimer

    threads: list[threading.Thread] = []
    original = memory_keyring.set_password

    def slow_set(service: str, username: str, password: str) -> None:
        threads.append(threading.current_thread())
        time.sleep(0.6)  # an unlock prompt
        original(service, username, password)

    memory_keyring.set_password = slow_set
    dialog = SettingsDialog(Settings())
    qtbot.addWidget(dialog)
    _fill_endpoint(dialog, base_url="https://api.example.com/v1", key=SECRET)
    ticks: list[float] = []
    timer = QTimer()
    timer.timeout.connect(lambda: ticks.append(time.monotonic()))
    timer.start(50)

    async def scenario() -> None:
        assert dialog.save()
        assert not dialog.save_button.isEnabled()  # one save at a time
        await dialog.saving

    loop.run_until_complete(scenario())
    timer.stop()
    assert threads and threads[0] is not threading.main_thread()
    assert len(ticks) >= 5  # the Qt loop kept running while the keyring worked
    assert memory_keyring.store[("desktop-app", "endpoint:lab")] == SECRET
    assert dialog.save_button.isEnabled()


def test_a_cleared_key_field_is_not_saved_and_the_form_waits_for_add(qtbot) -> None:
    dialog = SettingsDialog(Settings())
    qtbot.addWidget(dialog)
    editor = dialog.endpoints
    assert editor.form_widget.isHidden() and not editor.empty_hint.isHidden()
    _fill_endpoint(dialog, base_url="https://api.example.com/v1", key=SECRET)
    assert not editor.form_widget.isHidden() and editor.empty_hint.isHidden()
    editor.commit()
    assert editor.new_keys == {0: SECRET}
    editor.api_key.clear()
    editor.commit()
    assert editor.new_keys == {}


def test_validation_names_the_problem(qtbot, tmp_path) -> None:
    dialog = SettingsDialog(Settings())
    qtbot.addWidget(dialog)
    _fill_endpoint(dialog, name="qwen2.5-coder-0.5b", base_url="ftp://nope")
    dialog.local.add_model(tmp_path / "missing.gguf")
    assert not dialog.save()
    text = dialog.error.text()
    assert "share the name qwen2.5-coder-0.5b" in text
    assert "must start with http://" in text
    assert "missing.gguf does not exist" in text


def test_presets_fill_the_base_url(qtbot) -> None:
    dialog = SettingsDialog(Settings())
    qtbot.addWidget(dialog)
    editor = dialog.endpoints
    editor.add_button.click()
    labels = [editor.preset.itemText(i) for i in range(editor.preset.count())]
    for wanted in ("OpenAI", "Ollama", "LM Studio", "llama.cpp server", "vLLM", "OpenRouter"):
        assert wanted in labels
    index = editor.preset.findText("Ollama")
    editor.preset.setCurrentIndex(index)
    editor.preset.activated.emit(index)
    assert editor.base_url.text() == "http://localhost:11434/v1"
    assert editor.name.text() == "ollama"


def test_theme_and_tools_round_trip(qtbot) -> None:
    dialog = SettingsDialog(Settings())
    qtbot.addWidget(dialog)
    dialog.theme.setCurrentIndex(dialog.theme.findData("dark"))
    first = dialog.tool_list.item(0)
    from PySide6.QtCore import Qt

    first.setCheckState(Qt.CheckState.Unchecked)
    result = dialog.collect()
    assert result.ui.theme == "dark"
    assert result.tools.disabled == [first.data(Qt.ItemDataRole.UserRole)]


def test_test_connection_to_an_unreachable_server_says_so(qtbot, loop) -> None:
    dialog = SettingsDialog(Settings(endpoints=[EndpointModelConfig(
        name="down", base_url="http://127.0.0.1:9/v1", model="x")]))
    qtbot.addWidget(dialog)
    ok = loop.run_until_complete(dialog.endpoints.test_connection())
    assert not ok
    assert dialog.endpoints.result.text().startswith("⚠")
    assert "127.0.0.1:9" in dialog.endpoints.result.text()


@pytest.mark.real_model
def test_fetch_models_and_test_connection_against_a_real_server(qtbot, loop, openai_server) -> None:
    dialog = SettingsDialog(Settings(endpoints=[EndpointModelConfig(
        name="local-server", base_url=openai_server.base_url, model="")]))
    qtbot.addWidget(dialog)
    editor = dialog.endpoints
    models = loop.run_until_complete(editor.fetch_models())
    assert openai_server.model in models
    assert editor.model.currentText() == openai_server.model
    assert loop.run_until_complete(editor.test_connection())
    assert editor.result.text().startswith("✓")


def test_code_tool_and_tool_timeout_round_trip(qtbot) -> None:
    from desktop_app.core.sandbox import sandbox_status

    dialog = SettingsDialog(Settings())
    qtbot.addWidget(dialog)
    assert not dialog.code_tool.isChecked()  # off by default
    assert dialog.code_tool.isEnabled() == sandbox_status().available
    dialog.code_tool.setChecked(True)
    dialog.tool_timeout.setValue(45)
    result = dialog.collect()
    assert result.tools.code_tool_enabled == sandbox_status().available
    assert result.tools.timeout_seconds == 45


def test_without_a_sandbox_the_code_tool_cannot_be_enabled_and_says_why(
        qtbot, monkeypatch: pytest.MonkeyPatch) -> None:
    from PySide6.QtWidgets import QLabel

    from desktop_app.core import sandbox
    from desktop_app.core.sandbox import status

    gone = status.SandboxStatus(False, "none", "bubblewrap is not installed.")
    monkeypatch.setattr(status, "sandbox_status", lambda: gone)
    monkeypatch.setattr(sandbox, "sandbox_status", lambda: gone)
    settings = Settings()
    settings.tools.code_tool_enabled = True
    dialog = SettingsDialog(settings)
    qtbot.addWidget(dialog)
    assert not dialog.code_tool.isEnabled() and not dialog.code_tool.isChecked()
    texts = [label.text() for label in dialog.findChildren(QLabel)]
    assert any("bubblewrap is not installed" in text for text in texts)
    assert dialog.collect().tools.code_tool_enabled is False


def test_the_three_list_pages_share_add_edit_remove(qtbot, tmp_path) -> None:
    from desktop_app.core.config.settings import EndpointModelConfig
    from desktop_app.ui.settings_endpoints import EndpointsEditor
    from desktop_app.ui.settings_list import ListEditor
    from desktop_app.ui.settings_models import LocalModelsEditor, McpEditor

    local = LocalModelsEditor(Settings().bundled, [])
    mcp = McpEditor([])
    endpoints = EndpointsEditor([EndpointModelConfig(name="a", base_url="http://x/v1",
                                                     model="m")])
    for editor in (local, mcp, endpoints):
        qtbot.addWidget(editor)
        assert isinstance(editor, ListEditor)
    local.add_model(tmp_path / "one.gguf")
    local.add_model(tmp_path / "one.gguf")  # same stem: a unique name
    assert [m.name for m in local.models] == ["one", "one-2"]
    local.name.setText("renamed")
    local.list.setCurrentRow(0)  # moving the selection keeps the edit
    assert [m.name for m in local.models] == ["one", "renamed"]
    assert local.list.item(1).text() == "renamed"
    mcp.add_server()
    mcp.add_server()
    assert [s.name for s in mcp.servers] == ["mcp-1", "mcp-2"]
    mcp.list.setCurrentRow(0)
    mcp.remove_server()
    assert [s.name for s in mcp.servers] == ["mcp-2"] and mcp.list.count() == 1
    # A typed key belongs to its endpoint, also after an earlier one is removed.
    endpoints.add_endpoint()
    endpoints.api_key.setText("sk-second")
    endpoints.list.setCurrentRow(0)
    endpoints.remove_endpoint()
    assert [e.name for e in endpoints.endpoints] == ["endpoint-1"]
    assert endpoints.new_keys == {0: "sk-second"}


def test_about_names_the_version_and_where_data_lives(qtbot, app_home) -> None:
    from desktop_app import __version__
    from desktop_app.ui.settings_dialog import SettingsDialog

    dialog = SettingsDialog(Settings())
    qtbot.addWidget(dialog)
    dialog.about_button.click()
    text = dialog.about.facts.text()
    assert __version__ in text and str(app_home) in text
    assert "llama-cpp-python" in text


def test_removing_an_endpoint_removes_its_key_and_says_so(qtbot, loop, memory_keyring) -> None:
    """A key must not outlive the endpoint it was given for (issue 25)."""
    memory_keyring.store[("desktop-app", "endpoint:lab")] = SECRET
    memory_keyring.store[("desktop-app", "endpoint:other")] = "sk-other-0000000000"
    settings = Settings(endpoints=[
        EndpointModelConfig(name="lab", base_url="https://api.example.com/v1", model="m",
                            api_key_ref="endpoint:lab"),
        EndpointModelConfig(name="other", base_url="https://api.example.org/v1", model="m",
                            api_key_ref="endpoint:other")])

    async def scenario():
        window = await make_window(qtbot, ScriptedLLM(model_id="m"), settings=settings)
        window.open_settings()
        dialog = window.settings_dialog
        dialog.endpoints.list.setCurrentRow(0)
        dialog.endpoints.remove_endpoint()
        assert dialog.save()
        await dialog.saving
        for task in list(window._tasks):
            await task
        return window

    window = loop.run_until_complete(scenario())
    assert ("desktop-app", "endpoint:lab") not in memory_keyring.store
    assert memory_keyring.store[("desktop-app", "endpoint:other")] == "sk-other-0000000000"
    assert "“lab”" in window.banner.label.text() and "keyring" in window.banner.label.text()
