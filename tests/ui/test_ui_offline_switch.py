"""The offline lock's switch in the status bar: always visible, applies at once to every
connection, and is saved as the privacy.offline setting (off the Qt thread)."""

from __future__ import annotations

import json

import pytest
from ui_helpers import make_window, wait_for

from desktop_app.core import egress
from desktop_app.core.config.settings import settings_path


@pytest.fixture(autouse=True)
def _lock_off_after():
    yield
    egress.set_offline(False)


def test_the_switch_locks_and_unlocks_and_is_saved(qtbot, loop, app_home) -> None:
    async def scenario():
        window = await make_window(qtbot)
        window.ctx.persist_settings = True
        switch = window.offline_switch
        assert switch.isVisible() and switch.text() == "Offline lock: off"
        egress.guard("https://api.example.com/v1", "request")  # allowed while off
        switch.click()
        assert switch.text() == "Offline lock: on" and egress.is_offline()
        with pytest.raises(egress.OfflineBlockedError):
            egress.guard("https://api.example.com/v1", "request to the model")
        egress.guard("http://127.0.0.1:11434/v1", "request to the model")  # local stays
        await wait_for(lambda: settings_path().exists()
                       and json.loads(settings_path().read_text())["privacy"]["offline"])
        assert window.ctx.settings.privacy.offline
        switch.click()
        assert not egress.is_offline() and switch.text() == "Offline lock: off"

    loop.run_until_complete(scenario())


def test_the_setting_starts_the_window_locked(qtbot, loop) -> None:
    from desktop_app.core.config.settings import PrivacySettings, Settings

    async def scenario():
        window = await make_window(qtbot, settings=Settings(
            privacy=PrivacySettings(offline=True)))
        return window.offline_switch.isChecked(), egress.is_offline()

    assert loop.run_until_complete(scenario()) == (True, True)
