"""Keyboard: F1 lists the shortcuts (from the table that registers them), Esc closes the
Models window, and the Models window shows no settings values while no model is chosen."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import QApplication
from ui_helpers import make_window, wait_for

from desktop_app.core.llm.testing import ScriptedLLM

pytestmark = pytest.mark.gui


def _press(qtbot, widget, keys: str) -> None:
    sequence = QKeySequence(keys)
    combo = sequence[0]
    qtbot.keyClick(widget, combo.key(), combo.keyboardModifiers())


def test_f1_lists_every_shortcut_and_they_work(qtbot, loop) -> None:
    async def scenario() -> None:
        window = await make_window(qtbot, ScriptedLLM(["hi"], model_id="m"))
        window.activateWindow()
        _press(qtbot, window.composer.input, "F1")
        await wait_for(lambda: getattr(window, "shortcuts_dialog", None) is not None
                       and window.shortcuts_dialog.isVisible())
        table = window.shortcuts_dialog.table
        rows = {table.item(r, 0).text(): table.item(r, 1).text()
                for r in range(table.rowCount())}
        for keys in ("Ctrl+N", "Ctrl+,", "Ctrl+Shift+M", "F1", "Esc", "Ctrl+Shift+Space"):
            native = QKeySequence(keys).toString(QKeySequence.SequenceFormat.NativeText)
            assert native in rows, (keys, rows)
        assert "Settings" in rows[QKeySequence("Ctrl+,").toString(
            QKeySequence.SequenceFormat.NativeText)]
        window.shortcuts_dialog.close()
        # A listed shortcut does what the list says.
        _press(qtbot, window.composer.input, "Ctrl+,")
        await wait_for(lambda: getattr(window, "settings_dialog", None) is not None
                       and window.settings_dialog.isVisible())
        window.settings_dialog.reject()

    loop.run_until_complete(scenario())


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_the_models_window_closes_with_esc_and_shows_nothing_unselected(qtbot, loop) -> None:
    async def scenario() -> None:
        window = await make_window(qtbot, ScriptedLLM(["hi"], model_id="m"))
        window.open_models()
        models = window.models_window
        await wait_for(models.isVisible)
        models.installed.clearSelection()
        assert models.context.text() == "—" and not models.context.isEnabled()
        assert "512" not in models.context.text()
        models.activateWindow()
        QApplication.setActiveWindow(models)  # Xvfb has no window manager to activate it
        qtbot.keyClick(models, Qt.Key.Key_Escape)
        await wait_for(lambda: not models.isVisible())

    loop.run_until_complete(scenario())
