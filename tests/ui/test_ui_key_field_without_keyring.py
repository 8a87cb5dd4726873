"""Without a keyring the API key field takes the focus but no text: a key typed after a
click used to land in the Model field ("gpt-4o-minisk-fake-1234567890")."""

from __future__ import annotations

from typing import Any

import pytest
from PySide6.QtCore import Qt

from desktop_app.core.config.settings import EndpointModelConfig

pytestmark = pytest.mark.gui


def test_typing_a_key_without_a_keyring_goes_nowhere_else(
        qtbot: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("desktop_app.core.config.secrets.keyring_available", lambda: False)
    from desktop_app.ui.settings_endpoints import EndpointsEditor

    editor = EndpointsEditor([EndpointModelConfig(name="a", base_url="http://x/v1",
                                                  model="gpt-4o-mini")])
    qtbot.addWidget(editor)
    editor.show()
    qtbot.waitExposed(editor)
    editor.model.setFocus()
    qtbot.mouseClick(editor.api_key, Qt.MouseButton.LeftButton)
    qtbot.keyClicks(editor.api_key if editor.api_key.hasFocus() else editor.focusWidget(),
                    "sk-fake-1234567890")
    assert editor.model.currentText() == "gpt-4o-mini"
    assert editor.api_key.text() == ""
    assert "environment variable" in editor.api_key.placeholderText()
