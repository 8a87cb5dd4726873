"""Starting the desktop app: Qt environment, QApplication, the qasync loop, the window.

``run_app()`` is what ``desktop-app`` (no command) runs. Order matters and is kept here in
one place: environment defaults → import QtWebEngineWidgets → QApplication → theme →
asyncio loop → window. The first launch needs no configuration: the default model is the
bundled one; if it has not been assembled yet that starts in the background (with
progress shown) while the window is already usable.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
from collections.abc import Sequence

from PySide6.QtWidgets import QApplication

log = logging.getLogger(__name__)


def configure_environment() -> None:
    """Defaults Qt needs on this machine; a value the user set always wins.

    * no display server on Linux → the ``offscreen`` platform (the app still works, e.g.
      for screenshots), instead of Qt aborting with "could not connect to display";
    * running as root → Chromium refuses its sandbox, so QtWebEngine needs it disabled.
    """
    if sys.platform.startswith("linux"):
        headless = not os.environ.get("DISPLAY") and not os.environ.get("WAYLAND_DISPLAY")
        if headless:
            os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
        if os.geteuid() == 0:
            os.environ.setdefault("QTWEBENGINE_DISABLE_SANDBOX", "1")
        if headless or os.geteuid() == 0:
            os.environ.setdefault("QTWEBENGINE_CHROMIUM_FLAGS", "--disable-gpu")


def create_application(argv: Sequence[str] | None = None) -> QApplication:
    """The QApplication (reused if one exists), created after QtWebEngine is imported."""
    configure_environment()
    # QtWebEngine must be imported before the QApplication exists (it sets up GL sharing);
    # importing only maps the library, the web view itself is created lazily.
    import PySide6.QtWebEngineWidgets  # noqa: F401

    existing = QApplication.instance()
    if isinstance(existing, QApplication):
        return existing
    app = QApplication(list(argv) if argv is not None else sys.argv[:1])
    app.setApplicationName("desktop-app")
    app.setApplicationDisplayName("desktop-app")
    app.setOrganizationName("desktop-app")
    # The window's close ends the asyncio main coroutine, which then shuts down in order.
    app.setQuitOnLastWindowClosed(False)
    from desktop_app.ui.theme import icon_path

    icon = icon_path("app")
    if icon.is_file():  # missing resources (an unusual install) cost only the icon
        from PySide6.QtGui import QIcon

        app.setWindowIcon(QIcon(str(icon)))
    return app


async def open_window(app: QApplication, ctx: object | None = None):  # -> MainWindow
    """Open the store and registry (unless given), apply the theme, show the window."""
    from desktop_app.core.config.settings import Settings, load_settings
    from desktop_app.core.errors import ConfigError
    from desktop_app.ui import theme
    from desktop_app.ui.app_context import AppContext
    from desktop_app.ui.main_window import MainWindow

    settings_error: str | None = None
    if ctx is None:
        try:
            settings = load_settings()
        except ConfigError as exc:  # a broken settings file must not keep the app closed
            settings_error = str(exc)
            settings = Settings()
        ctx = await AppContext.open(settings)
    assert isinstance(ctx, AppContext)
    theme.apply(app, ctx.settings.ui.theme)
    window = MainWindow(ctx)
    window.show()
    await window.start()
    if settings_error:
        window.show_error(settings_error)
    return window


def prepare_default_model(window: object) -> None:
    """First launch: assemble the bundled model in the background, with progress shown."""
    from desktop_app.ui.main_window import MainWindow

    assert isinstance(window, MainWindow)
    registry = window.ctx.registry
    if not len(registry):
        return
    entry = registry.entry(registry.default_name)
    if entry.kind != "bundled":
        return
    from desktop_app.core.llm import bundled

    if bundled.is_bundled_model_ready():
        return  # loading (0.4 s) waits for the first message; memory stays low until then

    async def assemble() -> None:
        window.controller.model_status.emit("Preparing the built-in model (first launch only)…")

        def progress(done: int, total: int) -> None:
            loop.call_soon_threadsafe(window.controller.model_progress.emit, done, total)

        try:
            await asyncio.to_thread(bundled.ensure_bundled_model, progress)
        except Exception as exc:  # noqa: BLE001 - shown where the user will look
            window.show_error(str(exc))
            return
        finally:
            window.controller.model_status.emit("")
        window.ctx.preparing = asyncio.ensure_future(_prepare_assistant())

    loop = asyncio.get_running_loop()
    window.spawn(assemble())


async def _prepare_assistant() -> None:
    """The prompt state of the built-in model, built in a child process at low priority
    while the window sits idle (the first question waited 26 s for it, 62 s under load).
    Stopped when the window closes; a state half-written is never read (atomic rename)."""
    from desktop_app.core.voice.tts import app_command

    try:
        process = await asyncio.create_subprocess_exec(
            *app_command(), "_prepare-assistant", stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.DEVNULL,
            preexec_fn=(lambda: os.nice(10)) if os.name == "posix" else None)
    except (OSError, ValueError) as exc:  # only a speed-up: the first question builds it
        log.info("could not start preparing the assistant: %s", exc)
        return
    try:
        await process.wait()
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()


async def start_tools(window: object) -> None:
    """Start MCP servers after the window is up; a server that fails is reported, not fatal."""
    from desktop_app.ui.main_window import MainWindow

    assert isinstance(window, MainWindow)
    if not any(s.enabled for s in window.ctx.settings.mcp_servers):
        return
    status = await window.ctx.start_tools()
    failed = [f"{name}: {error}" for name, error in status.items() if error]
    if failed:
        window.banner.set_status("Some MCP tool servers did not start (their tools are off): "
                                 + "; ".join(failed) + " — check them in Settings → MCP servers.")


def run_app(argv: Sequence[str] | None = None) -> int:
    """Run the desktop app until its window is closed; returns the exit code.

    A database that cannot be opened because it is damaged is offered to be moved aside
    (kept for recovery), and the app then starts with an empty history."""
    from desktop_app.core.errors import DamagedDatabaseError
    from desktop_app.core.store.db import move_aside
    from desktop_app.ui import error_funnel

    app = create_application(argv)
    while True:
        failure = _run_window(app)
        if failure is None:
            return 0
        if isinstance(failure, KeyboardInterrupt):
            return 130
        message = error_funnel.user_message(failure, "startup")
        if isinstance(failure, DamagedDatabaseError) and error_funnel.offer_move_aside(
                message, failure.path):
            try:
                kept = move_aside(failure.path)
            except OSError as exc:
                error_funnel.show_startup_error(f"{message} Moving it aside failed: {exc}.")
                return 1
            print(f"desktop-app: the damaged database was kept as {kept}", file=sys.stderr)
            continue
        error_funnel.show_startup_error(message)
        return 1


def _run_window(app: QApplication) -> BaseException | None:
    """One run of the window on a fresh event loop: None when it was closed, else what
    stopped it from opening (or the Ctrl-C that ended it)."""
    from desktop_app.ui import error_funnel
    from desktop_app.ui.event_loop import make_event_loop

    loop = make_event_loop(app)
    asyncio.set_event_loop(loop)
    startup_error: list[BaseException] = []

    async def main() -> None:
        try:
            window = await open_window(app)
        except Exception as exc:  # noqa: BLE001 - a damaged database, an unwritable folder
            startup_error.append(exc)
            return
        error_funnel.install(loop, window.show_error)
        closed = asyncio.Event()
        window.closed.connect(closed.set)
        if window.is_closed:  # closed while it was still starting up
            closed.set()
        prepare_default_model(window)
        window.spawn(start_tools(window))
        await closed.wait()
        if window.ctx.preparing is not None:
            window.ctx.preparing.cancel()  # kills the child (it only saves time)
        await window.controller.wait_idle()
        if window.api_server.running:
            await window.api_server.stop()
        await window.ctx.aclose()

    try:
        loop.run_until_complete(main())
    except KeyboardInterrupt as exc:
        return exc
    finally:
        loop.close()
        from desktop_app.core import egress

        egress.flush_all()  # the privacy ledger's last rows are written before we exit
    return startup_error[0] if startup_error else None
