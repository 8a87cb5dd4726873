"""The first launch builds the built-in model's prompt state in a child process
(``desktop-app _prepare-assistant``), so the first question reads it from disk instead
of waiting for it (26 s after install, 62 s under load)."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.real_model

ROOT = Path(__file__).resolve().parents[2]


def test_the_child_builds_the_state_the_first_question_then_reads(
        bundled_model_path: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    env = dict(os.environ, DESKTOP_APP_HOME=str(home))
    done = subprocess.run([sys.executable, "-m", "desktop_app", "_prepare-assistant"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=600,
                          check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    states = home / "cache" / "prompt-states"
    built = {p.name: p.stat().st_ino for p in states.glob("*.state")}
    assert built, "no prompt state was written"

    # The window's first question, in this process, with the same settings and tools:
    # every state it needs is already there: read, not evaluated and saved again (a save
    # replaces the file, a new inode; a read only touches its time).
    from desktop_app.core.agent.factory import warm_up
    from desktop_app.core.config.settings import Settings
    from desktop_app.core.llm.factory import build_registry
    from desktop_app.core.tools.base import ToolRegistry
    from desktop_app.core.tools.builtin import default_tools

    previous = os.environ.get("DESKTOP_APP_HOME")
    os.environ["DESKTOP_APP_HOME"] = str(home)
    try:
        settings = Settings()
        registry = build_registry(settings)

        async def first_question() -> None:
            llm = registry.get(registry.default_name)
            try:
                await warm_up(llm, ToolRegistry(default_tools(settings)))
            finally:
                await registry.aclose()

        asyncio.run(first_question())
    finally:
        if previous is None:
            os.environ.pop("DESKTOP_APP_HOME", None)
        else:
            os.environ["DESKTOP_APP_HOME"] = previous
    after = {p.name: p.stat().st_ino for p in states.glob("*.state")}
    assert after == built
