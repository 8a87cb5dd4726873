"""``desktop-app ask --dag``: the CLI wiring, with scripted models behind the real parser."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import desktop_app.cli.ask as ask_module
from desktop_app.cli import main
from desktop_app.core.llm.registry import ModelRegistry
from desktop_app.core.llm.testing import ScriptedLLM, json_final

PLAN = json.dumps({"steps": [
    {"id": "step_1", "task": "find seven", "model_hint": "fast"},
    {"id": "step_2", "task": "find nine", "model_hint": "fast"}]})
VERDICT = '{"achieved": true, "confidence": 0.9, "reason": "both found", "final_answer": "7, 9"}'


@pytest.fixture
def scripted(monkeypatch: pytest.MonkeyPatch) -> tuple[ScriptedLLM, ScriptedLLM]:
    big = ScriptedLLM([PLAN, VERDICT, "Seven and nine."], model_id="big-model")
    small = ScriptedLLM([json_final("7"), json_final("9")], model_id="small-model")
    registry = ModelRegistry()
    registry.register("big", big, roles=["general"], default=True)
    registry.register("small", small, roles=["fast"])
    monkeypatch.setattr(ask_module, "build_registry", lambda settings: registry)
    return big, small


def test_ask_dag_prints_answer_to_stdout_and_progress_to_stderr(
        scripted: tuple[ScriptedLLM, ScriptedLLM], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["ask", "--dag", "find", "seven", "and", "nine"]) == 0
    out, err = capsys.readouterr()
    assert out == "Seven and nine.\n"
    assert "step_1 [small]: find seven" in err
    assert "step_1 started on small" in err
    assert "step_2 done" in err and "analysis: achieved (confidence 0.90)" in err
    assert "[done:" in err
    big, small = scripted
    assert "Goal: find seven and nine" in big.requests[0].last_user_text
    assert len(small.requests) == 2


def test_ask_dag_events_prints_sse_with_dag_channels(
        scripted: tuple[ScriptedLLM, ScriptedLLM], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["ask", "--dag", "--events", "find seven and nine"]) == 0
    out, _ = capsys.readouterr()
    channels = [line.split(": ", 1)[1] for line in out.splitlines() if line.startswith("event: ")]
    assert channels[0] == "phase" and channels[1] == "plan"
    assert "dag_step" in channels and "analysis" in channels and "answer" in channels
    assert channels[-1] == "done"


def test_ask_help_lists_the_dag_flag() -> None:
    proc = subprocess.run([sys.executable, "-m", "desktop_app", "ask", "--help"],
                          capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 0 and "--dag" in proc.stdout
