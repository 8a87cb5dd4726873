"""``desktop-app chat`` and ``desktop-app models`` as a user runs them: real subprocesses."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from desktop_app.core.config.settings import (
    EndpointModelConfig,
    LocalModelConfig,
    Settings,
    save_settings,
)
from desktop_app.core.llm.bundled import MODEL_ENV

REPO = Path(__file__).resolve().parents[2]


def _env(**extra: str) -> dict[str, str]:
    """The test's environment (DESKTOP_APP_HOME, the shared bundled model) plus ``extra``."""
    env = dict(os.environ)
    env.update(extra)
    env["PYTHONUNBUFFERED"] = "1"
    return env


def _run(*args: str, env: dict[str, str] | None = None,
         timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "desktop_app", *args], check=False, cwd=REPO,
                          env=env or _env(), capture_output=True, text=True, timeout=timeout)


# --- models --------------------------------------------------------------------------------
def test_models_lists_the_bundled_default() -> None:
    done = _run("models")
    assert done.returncode == 0, done.stderr
    line = next(line for line in done.stdout.splitlines() if "qwen2.5-coder-0.5b" in line)
    assert line.startswith("*") and "bundled" in line and "8192" in line
    # The bundled Qwen's chat template has a trained tool-call format, so it calls natively.
    assert "general" in line and "streaming" in line and "tool_call" in line


def test_models_lists_every_configured_model_with_roles_and_abilities(app_home: Path) -> None:
    save_settings(Settings(
        local_models=[LocalModelConfig(name="my-llama", path="/models/x.gguf",
                                       constrained_json=True, context_size=2048)],
        endpoints=[EndpointModelConfig(name="cloud", base_url="http://127.0.0.1:9/v1",
                                       model="gpt-x", roles=["reasoning"])],
        default_model="cloud"))
    done = _run("models", "--json")
    assert done.returncode == 0, done.stderr
    records = {r["name"]: r for r in json.loads(done.stdout)}
    assert set(records) == {"qwen2.5-coder-0.5b", "my-llama", "cloud"}
    assert records["cloud"]["default"] and not records["qwen2.5-coder-0.5b"]["default"]
    assert records["cloud"]["roles"] == ["reasoning"]
    assert records["cloud"]["abilities"] == ["json_mode", "streaming", "tool_call"]
    assert records["my-llama"]["abilities"] == ["json_mode", "streaming", "tool_call"]
    assert records["my-llama"]["context_size"] == 2048 and records["my-llama"]["kind"] == "local"
    table = _run("models").stdout
    assert next(ln for ln in table.splitlines() if " cloud " in ln).startswith("*")


def test_models_loads_no_model_library() -> None:
    code = ("import sys; from desktop_app.cli import main; main(['models']); "
            "print('LOADED' if 'llama_cpp' in sys.modules else 'CLEAN')")
    done = subprocess.run([sys.executable, "-c", code], check=False, cwd=REPO, env=_env(),
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.strip().endswith("CLEAN"), done.stderr


# --- chat ----------------------------------------------------------------------------------
@pytest.mark.real_model
def test_chat_streams_the_answer_token_by_token(bundled_model_path: Path) -> None:
    proc = subprocess.Popen([sys.executable, "-m", "desktop_app", "chat", "--max-tokens", "12",
                             "--system", "You are brief.", "Count from one to ten in words."],
                            cwd=REPO, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None
    pieces: list[bytes] = []
    while piece := os.read(proc.stdout.fileno(), 4096):
        pieces.append(piece)  # each read returns what was flushed so far
    stderr = proc.stderr.read().decode() if proc.stderr else ""
    assert proc.wait(timeout=120) == 0, stderr
    answer = b"".join(pieces).decode()
    assert answer.strip() and answer.endswith("\n")
    assert len(pieces) >= 3  # tokens were written as they came, not all at the end
    # The shared model was already assembled, and llama.cpp's own logging stays silent.
    assert stderr.splitlines() == ["Loading qwen2.5-coder-0.5b..."], stderr


def test_chat_with_unknown_model_is_a_clear_error() -> None:
    done = _run("chat", "--model", "nope", "hi")
    assert done.returncode == 2
    assert "No model named 'nope'" in done.stderr and "Traceback" not in done.stderr


@pytest.mark.real_model
def test_ctrl_c_stops_the_answer_cleanly(bundled_model_path: Path) -> None:
    proc = subprocess.Popen([sys.executable, "-m", "desktop_app", "chat", "--max-tokens", "500",
                             "Write the numbers from 1 to 400, one per line."],
                            cwd=REPO, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    assert os.read(proc.stdout.fileno(), 4096)  # the answer has started
    proc.send_signal(signal.SIGINT)
    sent = time.perf_counter()
    code = proc.wait(timeout=60)
    elapsed = time.perf_counter() - sent
    stderr = proc.stderr.read().decode()
    assert code == 130 and "interrupted" in stderr and "Traceback" not in stderr, stderr
    assert elapsed < 10  # 500 tokens would take far longer than stopping does


@pytest.mark.real_model
def test_first_use_assembles_the_bundled_model_with_progress(tmp_path: Path) -> None:
    target = tmp_path / "fresh" / "bundled.gguf"
    try:
        done = _run("chat", "--max-tokens", "3", "Hi", env=_env(**{MODEL_ENV: str(target)}))
        assert done.returncode == 0, done.stderr
        assert "Setting up the bundled model (first use only): 100%" in done.stderr
        assert target.stat().st_size == 491_400_064 and done.stdout.strip()
        again = _run("chat", "--max-tokens", "3", "Hi", env=_env(**{MODEL_ENV: str(target)}))
        assert again.returncode == 0 and "Setting up" not in again.stderr
    finally:
        target.unlink(missing_ok=True)  # 491 MB: do not keep it in pytest's tmp folders
