"""The real app starts offscreen: run_app opens and closes cleanly; screenshots are saved.

Both run in a subprocess, the way a user (or CI) starts the app: a fresh QApplication, the
real settings/registry/store in an empty app home, the bundled model by default.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.gui

ROOT = Path(__file__).resolve().parents[2]

RUN_APP = """
import sys, time
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication
from desktop_app.ui import app as ui_app

started = time.perf_counter()
shown = {}

def close_soon():
    for w in QApplication.topLevelWidgets():
        if w.isVisible() and w.windowTitle() == "desktop-app":
            shown["title"] = w.windowTitle()
            shown["model"] = w.picker.current_model()
            shown["empty"] = w.chat.empty.isVisible()
            w.close()
            return
    QTimer.singleShot(50, close_soon)

orig = ui_app.create_application
def patched(argv=None):
    app = orig(argv)
    QTimer.singleShot(300, close_soon)
    return app
ui_app.create_application = patched
code = ui_app.run_app()
print("RESULT", {"code": code, **shown})
"""


def _env(home: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["DESKTOP_APP_HOME"] = str(home)
    env["QT_QPA_PLATFORM"] = "offscreen"
    return env


def test_run_app_opens_the_window_on_the_bundled_model_and_exits_cleanly(tmp_path) -> None:
    proc = subprocess.run([sys.executable, "-c", RUN_APP], cwd=ROOT, env=_env(tmp_path),
                          capture_output=True, text=True, timeout=120, check=False)
    line = next((x for x in proc.stdout.splitlines() if x.startswith("RESULT")), None)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert line is not None, proc.stderr[-2000:]
    result = eval(line[len("RESULT "):])  # a dict literal we printed ourselves
    assert result == {"code": 0, "title": "desktop-app", "model": "qwen2.5-coder-0.5b",
                      "empty": True}
    assert (tmp_path / "data").exists()  # the store was created in the app home


def test_screenshot_script_saves_non_blank_pngs(tmp_path) -> None:
    out = tmp_path / "shots"
    # The way CI calls it: one .png path; all the shots land next to it.
    proc = subprocess.run([sys.executable, "packaging/screenshot.py", str(out / "screenshot.png")],
                          cwd=ROOT, env=_env(tmp_path / "home"), capture_output=True,
                          text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    report = json.loads(proc.stdout[proc.stdout.index("{"):])
    names = sorted(Path(p).name for p in report["screenshots"])
    assert names == ["01-first-launch.png", "02-conversation.png", "03-artifact-pane.png",
                     "04-settings.png", "05-compare.png", "06-dag-run.png", "07-models.png",
                     "08-models-recommended.png", "09-versions-and-assistant.png",
                     "10-assistants.png", "11-documents.png", "12-cited-answer.png",
                     "13-document-viewer.png", "14-shortcuts.png", "15-dag-reopened.png",
                     "16-answer-cut-at-the-limit.png", "17-models-in-memory.png",
                     "screenshot.png"]
    assert report["blank"] == []
    for name in names:
        assert (out / name).stat().st_size > 10_000
