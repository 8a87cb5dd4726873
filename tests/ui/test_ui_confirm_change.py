"""The confirmation dialog says what the call would change, and warns when it destroys
something (replacing a file), which "Always allow" does not cover."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QLabel

from desktop_app.core.agent.events import Confirm
from desktop_app.ui.confirm_dialog import ConfirmDialog

pytestmark = pytest.mark.gui


def _texts(dialog: ConfirmDialog) -> list[str]:
    return [label.text() for label in dialog.findChildren(QLabel)]


def test_a_replacement_is_spelled_out_with_a_warning(qtbot: object) -> None:
    answers: list[tuple[str, bool, bool]] = []
    event = Confirm(request_id="r1", tool_name="write_file",
                    tool_args={"path": "todo.md", "content": "gone"},
                    change="Replace 'todo.md' (14 B) with 4 characters (1 line). Its current "
                           "content will be lost.", destroys=True)
    dialog = ConfirmDialog(event, lambda *a: answers.append(a))
    qtbot.addWidget(dialog)  # type: ignore[attr-defined]
    texts = _texts(dialog)
    assert dialog.change_label.text().startswith("Replace 'todo.md' (14 B)")
    assert any("asked every time" in t for t in texts)
    dialog.deny_button.click()
    assert answers == [("r1", False, False)]


def test_a_new_file_has_no_warning_and_markup_in_names_stays_text(qtbot: object) -> None:
    event = Confirm(request_id="r2", tool_name="write_file",
                    tool_args={"path": "<b>x</b>.txt", "content": "hi"},
                    change="Create '<b>x</b>.txt' in your workspace with 2 characters (1 line).")
    dialog = ConfirmDialog(event, lambda *a: None)
    qtbot.addWidget(dialog)  # type: ignore[attr-defined]
    assert dialog.change_label.text().startswith("Create '<b>x</b>.txt'")  # shown literally
    assert not any("asked every time" in t for t in _texts(dialog))
