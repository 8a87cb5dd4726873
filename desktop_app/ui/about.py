"""About desktop-app: its version, the versions of what it runs on, and where it keeps
the user's data (the same facts ``desktop-app --version`` and the README give)."""

from __future__ import annotations

import platform
import sys

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QLabel, QVBoxLayout, QWidget

from desktop_app import __version__


def about_facts() -> list[tuple[str, str]]:
    """(label, value) pairs shown in the dialog."""
    import PySide6

    from desktop_app.core import paths

    try:
        import llama_cpp

        llama = getattr(llama_cpp, "__version__", "?")
    except Exception:  # noqa: BLE001 - a broken build: the dialog still opens
        llama = "not available"
    return [
        ("Version", __version__),
        ("Python", platform.python_version()),
        ("Qt for Python", PySide6.__version__),
        ("llama-cpp-python", llama),
        ("System", f"{platform.system()} {platform.machine()}"),
        ("Settings", str(paths.config_dir())),
        ("Conversations, notes, models", str(paths.data_dir())),
        ("Program", sys.executable),
    ]


class AboutDialog(QDialog):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("About desktop-app")
        layout = QVBoxLayout(self)
        title = QLabel(f"<b>desktop-app {__version__}</b><br>A private, local-first chat "
                       "assistant. Nothing leaves this computer unless you add a hosted "
                       "model. Apache-2.0.")
        title.setWordWrap(True)
        layout.addWidget(title)
        rows = "".join(f"<tr><td>{label}</td><td>&nbsp;&nbsp;{value}</td></tr>"
                       for label, value in about_facts())
        self.facts = QLabel(f"<table>{rows}</table>")
        self.facts.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        layout.addWidget(self.facts)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)
