"""The main window's dialogs and the windows it opens: settings (and applying them),
models, Compare, and following the system's theme.

A mixin of ``MainWindow`` (its widgets and controller are the window's own)."""

from __future__ import annotations

from typing import Any

import shiboken6

from desktop_app.core.errors import DesktopAppError
from desktop_app.ui import theme


class WindowDialogs:
    """Settings, Models and Compare for the main window (mixed into ``MainWindow``)."""

    ctx: Any
    controller: Any
    banner: Any
    picker: Any
    assistant: Any
    closed: Any

    # --- settings -------------------------------------------------------------------------------
    def open_settings(self) -> None:
        from desktop_app.ui.settings_dialog import SettingsDialog

        dialog = SettingsDialog(self.ctx.settings, self)
        dialog.saved.connect(self.settings_chosen)
        dialog.saved.connect(lambda _s: self._report_removed_keys(dialog))
        dialog.open()
        self.settings_dialog = dialog

    def _report_removed_keys(self, dialog: Any) -> None:
        names = getattr(dialog, "removed_keys", [])
        if names:
            self.banner.set_status("Removed from the keyring: the API key of "
                                   + ", ".join(f"“{n}”" for n in names) + ".")

    def settings_chosen(self, settings: Any) -> None:
        """Settings a dialog produced: the window's at once, saved and applied next."""
        self.ctx.settings = settings
        self.spawn(self.apply_settings(settings))

    async def apply_settings(self, settings: Any) -> None:
        """Save ``settings`` at once; models are swapped only once no answer is being
        written."""
        try:
            await self.ctx.save_settings(settings)
        except DesktopAppError as exc:  # in use all the same; the message says it is unsaved
            not_saved: DesktopAppError | None = exc
        else:
            not_saved = None
        if self.controller.active is not None:
            self.banner.set_status("Settings will apply when the current answer is done…")
            await self.controller.wait_idle()
            self.banner.set_status("")
        self.controller.forget_models()
        await self.ctx.apply_settings(settings)
        from PySide6.QtWidgets import QApplication

        app = QApplication.instance()
        if isinstance(app, QApplication):
            theme.apply(app, settings.ui.theme)
        self.picker.set_registry(self.ctx.registry, self.picker.current_model())
        self.assistant.refresh()
        self._show_model_in_empty_state()
        self.spawn(self.refresh_speeds())
        if not_saved is not None:
            raise not_saved

    def _system_theme_changed(self, *_: object) -> None:
        from PySide6.QtWidgets import QApplication

        app = QApplication.instance()
        if self.ctx.settings.ui.theme == "system" and isinstance(app, QApplication):
            theme.apply(app, "system")

    def open_models(self) -> None:
        from desktop_app.ui.models_window import open_models_window  # not at start-up

        open_models_window(self)

    def _models_dropped(self, paths: list[Any]) -> None:
        from desktop_app.ui.models_window import add_dropped_models

        add_dropped_models(self, paths)

    # --- compare --------------------------------------------------------------------------------
    def open_compare(self) -> None:
        """Show the Compare models… window (one per main window, kept between openings)."""
        from desktop_app.ui.compare_window import CompareWindow

        window = getattr(self, "compare_window", None)
        if window is None or not shiboken6.isValid(window):
            window = CompareWindow(self.ctx, self.controller.ensure_llm, self)
            window.speeds = self.picker.speeds
            self.closed.connect(window.close)
            self.compare_window = window
        window.set_registry()  # settings may have changed the models since
        window.show()
        window.raise_()
        window.activateWindow()
