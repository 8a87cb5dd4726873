"""Every error the window meets is shown: the app's own as they are, anything else as one
line with a report file; a damaged database at launch is a dialog and exit code 1, not a
traceback with no window."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from ui_helpers import make_window, wait_for

from desktop_app.core.llm.testing import ScriptedLLM
from desktop_app.ui import error_funnel

pytestmark = pytest.mark.gui

ROOT = Path(__file__).resolve().parents[2]


def _errors(window: Any) -> list[str]:
    from desktop_app.ui.text_wrap import WrappingText

    return [view.text() for view in window.chat.findChildren(WrappingText)
            if "went wrong" in view.text() or "Details for a bug report" in view.text()]


@pytest.mark.anyio
async def test_a_failing_background_task_is_shown_in_the_chat(qtbot: Any, app_home: Path) -> None:
    window = await make_window(qtbot, ScriptedLLM([]))

    async def broken() -> None:
        raise ValueError("the gauge could not be read")

    window.spawn(broken())
    await wait_for(lambda: _errors(window))
    [shown] = _errors(window)
    assert "ValueError: the gauge could not be read" in shown
    report = Path(shown.split("Details for a bug report: ")[1].strip())
    assert "Traceback" in report.read_text()


@pytest.mark.anyio
async def test_unhandled_loop_errors_and_slot_exceptions_reach_the_window(
        qtbot: Any, app_home: Path) -> None:
    window = await make_window(qtbot, ScriptedLLM([]))
    loop = asyncio.get_running_loop()
    old_handler, old_hook = loop.get_exception_handler(), sys.excepthook
    try:
        error_funnel.install(loop, window.show_error)

        loop.call_exception_handler({"message": "Task exception was never retrieved",
                                     "exception": KeyError("orphan task")})
        sys.excepthook(RuntimeError, RuntimeError("a button handler failed"), None)
        await wait_for(lambda: len(_errors(window)) == 2)
        text = " ".join(_errors(window))
        assert "orphan task" in text and "a button handler failed" in text
    finally:
        loop.set_exception_handler(old_handler)
        sys.excepthook = old_hook


START_DAMAGED = """
import sys
from desktop_app.ui import app as ui_app, error_funnel
shown = []
error_funnel.show_startup_error = shown.append
asked = []
move = sys.argv[1] == "move"
def offer(message, path):
    asked.append(message)
    return move
error_funnel.offer_move_aside = offer
opened = []
real_open = ui_app.open_window
async def open_then_close(app, ctx=None):
    window = await real_open(app, ctx)
    opened.append(window.ctx.store is not None)
    window.close()
    return window
ui_app.open_window = open_then_close
code = ui_app.run_app()
print("RESULT", code, repr(shown), "ASKED", len(asked), repr(asked), "OPENED", opened)
"""


def _launch_on_damaged_database(tmp_path: Path, answer: str) -> tuple[str, Path]:
    home = tmp_path / "home"
    (home / "data").mkdir(parents=True)
    (home / "data" / "conversations.db").write_bytes(b"this is not a database" * 200)
    env = dict(os.environ, DESKTOP_APP_HOME=str(home), QT_QPA_PLATFORM="offscreen")
    proc = subprocess.run([sys.executable, "-c", START_DAMAGED, answer], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120, check=False)
    assert "Traceback" not in proc.stderr, proc.stderr[-2000:]
    line = next(x for x in proc.stdout.splitlines() if x.startswith("RESULT"))
    return line, home / "data"


def test_a_damaged_database_at_launch_is_a_message_and_exit_code_1(tmp_path: Path) -> None:
    line, data = _launch_on_damaged_database(tmp_path, "quit")
    assert line.startswith("RESULT 1 ") and "ASKED 1" in line and "OPENED []" in line
    assert "could not be opened" in line and "move it aside" in line
    assert [p.name for p in data.iterdir()] == ["conversations.db"]  # untouched


def test_a_damaged_database_moved_aside_at_launch_starts_the_app(tmp_path: Path) -> None:
    line, data = _launch_on_damaged_database(tmp_path, "move")
    assert line.startswith("RESULT 0 [] ASKED 1") and "OPENED [True]" in line, line
    kept = [p for p in data.iterdir() if p.name.startswith("conversations.db.damaged-")]
    assert len(kept) == 1 and kept[0].read_bytes().startswith(b"this is not a database")
    assert (data / "conversations.db").exists()  # a new, empty history


@pytest.mark.anyio
async def test_an_error_is_shown_without_reading_the_keyring_on_the_qt_thread(
        qtbot: Any, app_home: Path, memory_keyring: Any) -> None:
    """The report scrubs every API key; reading them may wait for a keyring's unlock
    prompt, so the window reads them on a worker thread at start, never while showing an
    error (issue 25)."""
    import threading

    from desktop_app.core.config.settings import EndpointModelConfig, Settings, save_settings

    key = "sk-funnel-0123456789abcdef"
    memory_keyring.store[("desktop-app", "endpoint:lab")] = key
    save_settings(Settings(endpoints=[EndpointModelConfig(
        name="lab", base_url="https://api.example.com/v1", model="m",
        api_key_ref="endpoint:lab")]))
    reads: list[threading.Thread] = []
    original = memory_keyring.get_password

    def recorded(service: str, username: str) -> str | None:
        reads.append(threading.current_thread())
        return original(service, username)

    memory_keyring.get_password = recorded
    window = await make_window(qtbot, ScriptedLLM([]))
    await wait_for(lambda: bool(reads))  # warmed at start

    async def broken() -> None:
        raise ValueError(f"the server said: bad key {key}")

    window.spawn(broken())
    await wait_for(lambda: _errors(window))
    [shown] = _errors(window)
    report = Path(shown.split("Details for a bug report: ")[1].strip())
    assert key not in shown and key not in report.read_text()
    assert reads and all(thread is not threading.main_thread() for thread in reads)
