"""A server that refuses tool definitions is remembered in the settings the window holds
and in settings.json (off the window's thread), so a later Save does not switch tool
calling back on."""

from __future__ import annotations

from pathlib import Path

from desktop_app.core.config.settings import (
    EndpointModelConfig,
    Settings,
    load_settings,
    save_settings,
)
from desktop_app.core.llm.factory import remember_no_tool_calls


def test_the_live_settings_and_the_file_both_say_no_tools(app_home: Path) -> None:
    live = Settings()
    live.endpoints = [EndpointModelConfig(name="srv", base_url="http://127.0.0.1:9/v1",
                                          model="m")]
    save_settings(live)
    thread = remember_no_tool_calls(live.endpoints[0])
    assert live.endpoints[0].tool_call is False  # at once, in what the window holds
    thread.join(10)
    assert load_settings().endpoints[0].tool_call is False
    live.ui.theme = "dark"
    save_settings(live)  # the settings dialog's next Save
    assert load_settings().endpoints[0].tool_call is False
