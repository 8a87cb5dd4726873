"""Session fixture: a real OpenAI-compatible server on 127.0.0.1 (llama-cpp-python's server).

It serves the bundled Qwen2.5-Coder-0.5B GGUF with the ``chatml-function-calling`` chat
format, so forced ``tool_choice`` returns real ``tool_calls`` and ``json_object`` works. The
OpenAI adapter's tests talk to it over real HTTP, exactly as they would to a user's server.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

__all__ = ["SERVER_MODEL_ALIAS", "OpenAIServer", "openai_server"]

#: The id the server reports for the bundled model (``--model_alias``).
SERVER_MODEL_ALIAS = "bundled-qwen2.5-coder-0.5b"
#: Loading 0.5 B weights takes about a second; the rest is slack for a machine shared by
#: many test processes.
STARTUP_TIMEOUT = 120.0


@dataclass(frozen=True)
class OpenAIServer:
    """A running loopback server: point ``OpenAICompatibleLLM`` at ``base_url`` and ``model``."""

    base_url: str
    model: str
    process: subprocess.Popen[bytes]
    log_path: Path

    def cpu_seconds(self) -> float:
        """CPU time the server process has used so far (Linux ``/proc``): shows whether it
        is still generating."""
        fields = Path(f"/proc/{self.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def log_tail(self, lines: int = 40) -> str:
        """The last lines the server wrote (for failure messages)."""
        try:
            text = self.log_path.read_text(errors="replace")
        except OSError:
            return "<no server log>"
        return "\n".join(text.splitlines()[-lines:])


def _server_env() -> dict[str, str]:
    """The server's environment: OpenMP threads sleep when idle, as in the app itself
    (``llama_loading`` sets the same default), whatever this process imported first."""
    env = os.environ.copy()
    env.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    return env


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _models_answer(base_url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{base_url}/models", timeout=2) as response:
            return bool(response.status == 200)
    except (urllib.error.URLError, OSError):
        return False


def _start(model_path: Path, log_path: Path,
           chat_format: str | None = "chatml-function-calling",
           threads: int = 1) -> OpenAIServer:
    """The server on a free loopback port; ``chat_format=None`` uses the GGUF's own chat
    template, as the server does when started without ``--chat_format``."""
    port = _free_port()
    command = [
        sys.executable, "-m", "llama_cpp.server",
        "--model", str(model_path),
        "--model_alias", SERVER_MODEL_ALIAS,
        *(["--chat_format", chat_format] if chat_format else []),
        "--host", "127.0.0.1",
        "--port", str(port),
        "--n_ctx", "4096",
        # One thread for tests: on a busy 2-core machine (parallel test sessions) two
        # llama.cpp threads wait on each other; measured here under load: 12 tokens in
        # 2.1 s with one thread, 11-21 s with two.
        "--n_threads", str(threads),
        "--n_threads_batch", str(threads),
        "--verbose", "False",
    ]
    with log_path.open("wb") as log:  # a file, not a pipe: a full pipe would block the server
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT,
                                   stdin=subprocess.DEVNULL, env=_server_env())
    server = OpenAIServer(base_url=f"http://127.0.0.1:{port}/v1", model=SERVER_MODEL_ALIAS,
                          process=process, log_path=log_path)
    deadline = time.monotonic() + STARTUP_TIMEOUT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"llama_cpp.server exited with code {process.returncode} before "
                               f"answering:\n{server.log_tail()}")
        if _models_answer(server.base_url):
            return server
        time.sleep(0.25)
    _stop(process)
    raise RuntimeError(f"llama_cpp.server did not answer on {server.base_url} within "
                       f"{STARTUP_TIMEOUT:.0f} s:\n{server.log_tail()}")


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=15)


@pytest.fixture(scope="session")
def openai_server(bundled_model_path: Path,
                  tmp_path_factory: pytest.TempPathFactory) -> Iterator[OpenAIServer]:
    """llama-cpp-python's OpenAI-compatible server on the bundled model, for the session."""
    log_dir = tmp_path_factory.mktemp("openai-server")
    server = None
    errors = []
    for attempt in range(2):  # the free port can be taken between probing and binding it
        try:
            server = _start(bundled_model_path, log_dir / f"server-{attempt}.log")
            break
        except RuntimeError as exc:
            errors.append(str(exc))
    if server is None:
        pytest.fail("Could not start the loopback OpenAI-compatible server:\n\n"
                    + "\n\n".join(errors), pytrace=False)
    try:
        yield server
    finally:
        _stop(server.process)
