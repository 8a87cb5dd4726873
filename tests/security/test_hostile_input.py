"""Hostile input that used to escape as raw exceptions: deep JSON, a tool's own timeout."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from desktop_app.core.agent.json_mode import parse_action
from desktop_app.core.config.settings import load_settings
from desktop_app.core.llm.json_extract import extract_json, loads_lenient

DEEP = "[" * 100_000 + "]" * 100_000


def test_deeply_nested_json_from_a_model_is_just_not_json() -> None:
    assert extract_json('{"a": ' + DEEP + "}") is None
    action = parse_action('{"type": "final_answer", "answer": ' + DEEP + "}")
    assert action.kind == "final_answer"  # read as plain text, never a RecursionError
    try:
        loads_lenient(DEEP)
    except ValueError as exc:
        assert "too deeply" in str(exc)
    else:
        raise AssertionError("nesting this deep must be refused")


def test_deeply_nested_settings_start_from_defaults_and_keep_the_file(app_home: Path) -> None:
    config = app_home / "config"
    config.mkdir(parents=True, exist_ok=True)
    (config / "settings.json").write_text('{"schema_version": 1, "x": ' + DEEP + "}")
    assert load_settings().default_model is None
    assert [p.name for p in config.iterdir() if p.name.startswith("settings.json.bad-")]


def test_every_cli_command_survives_deep_settings_without_a_traceback(app_home: Path) -> None:
    config = app_home / "config"
    config.mkdir(parents=True, exist_ok=True)
    (config / "settings.json").write_text('{"schema_version": 1, "x": ' + DEEP + "}")
    done = subprocess.run([sys.executable, "-m", "desktop_app", "models"], capture_output=True,
                          text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr and "not valid JSON" in done.stderr
