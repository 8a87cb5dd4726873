"""A new chat starts without the last chat's own options: an attached document collection
used to follow into every new chat ("Documents: Home") and take over unrelated questions."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from ui_helpers import make_window

from desktop_app.core.llm.testing import ScriptedLLM

pytestmark = pytest.mark.gui


@pytest.mark.anyio
async def test_attached_documents_and_chat_options_stay_with_their_chat(
        qtbot: Any, app_home: Path) -> None:
    window = await make_window(qtbot, ScriptedLLM([]))
    window.documents.set_attached("Home", True)
    window.assistant.options = window.assistant.options.model_copy(update={"temperature": 1.2})
    assert window.documents.button.text() == "Documents: Home"
    window.new_conversation()
    assert window.documents.attached == []
    assert window.documents.button.text() == "Documents"
    assert window.assistant.options.temperature is None
