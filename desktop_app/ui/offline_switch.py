"""The offline lock's switch, always visible in the window's status bar (issue 25).

On: nothing leaves the computer (core/egress refuses hosted models, the hub and downloads
before any connection); local models and servers on localhost keep working. The choice is
the ``privacy.offline`` setting, saved off the Qt thread, and applies at once to every run
(no model is reloaded for it).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtWidgets import QToolButton, QWidget

from desktop_app.core import egress
from desktop_app.core.config.settings import Settings

_ON = "Offline lock: on"
_OFF = "Offline lock: off"
_ON_TIP = ("Nothing leaves this computer: hosted models, model downloads and hub searches "
           "are refused before any connection. Local models and servers on localhost keep "
           "working. Click to allow connections again.")
_OFF_TIP = ("Hosted models and the model hub may be used. Click to lock: nothing will leave "
            "this computer.")


class OfflineSwitch(QToolButton):
    """A checkable status-bar button bound to the offline lock and its setting."""

    def __init__(self, ctx: Any, spawn: Callable[[Any], Any],
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._ctx = ctx
        self._spawn = spawn
        self.setObjectName("OfflineSwitch")
        self.setCheckable(True)
        on = bool(egress.is_offline() or ctx.settings.privacy.offline)
        egress.set_offline(on)
        self.setChecked(on)
        self._show(on)
        self.toggled.connect(self._toggled)

    def _show(self, on: bool) -> None:
        self.setText(_ON if on else _OFF)
        self.setToolTip(_ON_TIP if on else _OFF_TIP)

    def _toggled(self, on: bool) -> None:
        egress.set_offline(on)
        self._show(on)
        def switch(settings: Settings) -> bool:
            changed = settings.privacy.offline != on
            settings.privacy.offline = on
            return changed

        self._spawn(self._ctx.update_settings(switch))
