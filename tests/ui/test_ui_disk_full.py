"""A full disk in the window: a message that says what to do, nothing lost, no traceback.
A real full file system (``small_disk`` in tests/conftest.py), not a simulated error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from disk_helpers import fill_disk
from ui_helpers import make_window, wait_for

from desktop_app.core.config.settings import Settings, save_settings, settings_path
from desktop_app.core.llm.testing import ScriptedLLM

pytestmark = pytest.mark.gui


def _errors(window) -> list[str]:
    from desktop_app.ui.message_widgets import ErrorCard

    return [card.message for card in window.chat.findChildren(ErrorCard)]


def test_settings_saved_on_a_full_disk_say_so_and_keep_the_old_file(qtbot, loop,
                                                                     small_disk: Path) -> None:
    save_settings(Settings())
    before = settings_path().read_text()

    async def scenario() -> None:
        window = await make_window(qtbot, ScriptedLLM(["hi"], model_id="m"))
        window.ctx.persist_settings = True
        filler = fill_disk(small_disk)
        window.open_settings()
        dialog = window.settings_dialog
        dialog.theme.setCurrentIndex(dialog.theme.findData("dark"))
        assert dialog.save()
        await dialog.saving
        await wait_for(lambda: bool(_errors(window)))
        [error] = _errors(window)
        assert "Settings could not be saved" in error and "disk is full" in error
        assert "Free some space" in error and "Traceback" not in error
        assert window.ctx.settings.ui.theme == "dark"  # in use all the same
        assert settings_path().read_text() == before  # the saved file is intact
        assert [p.name for p in settings_path().parent.iterdir()] == ["settings.json"]
        # Space again: the next change is saved, with the one before it.
        filler.unlink()
        window.offline_switch.click()
        await wait_for(lambda: json.loads(settings_path().read_text())["privacy"]["offline"])
        assert json.loads(settings_path().read_text())["ui"]["theme"] == "dark"
        window.offline_switch.click()

    loop.run_until_complete(scenario())


def test_a_message_sent_on_a_full_disk_is_not_lost(qtbot, loop, small_disk: Path) -> None:
    async def scenario() -> None:
        window = await make_window(qtbot, ScriptedLLM(["The answer."], model_id="m"))
        fill_disk(small_disk)
        window.composer.input.setPlainText("Remember this long question of mine")
        window.composer.send_button.click()
        await wait_for(lambda: bool(_errors(window)))
        await window.controller.wait_idle()
        text = " ".join(_errors(window))
        assert "free space" in text and "Traceback" not in text, text
        assert "Remember this long question of mine" in window.composer.input.toPlainText()

    loop.run_until_complete(scenario())
