"""An API key never reaches the terminal, even when a server echoes it back in an error."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "llm"))
from fake_openai_server import Reply, fake_server, use_endpoint  # noqa: F401

KEY = "sk-live-LEAKCHECK-0123456789abcdef"


@pytest.mark.parametrize("command", [["ask", "--dag", "plan my week"], ["ask", "hi"],
                                     ["chat", "hi"]])
def test_a_server_echoing_the_key_in_a_401_never_gets_it_printed(
        command: list[str], fake_server, app_home: Path,  # noqa: F811
        monkeypatch: pytest.MonkeyPatch) -> None:
    use_endpoint(app_home, fake_server.base_url, name="hosted", model="gpt-x",
                 endpoint={"api_key_env": "LEAKCHECK_API_KEY"})
    echo = {"error": {"message": f"Incorrect API key provided: {KEY}", "type": "invalid_request",
                      "code": "invalid_api_key"}}
    for _ in range(12):
        fake_server.add(Reply(status=401, body=echo))
    monkeypatch.setenv("LEAKCHECK_API_KEY", KEY)
    done = subprocess.run([sys.executable, "-m", "desktop_app", *command], capture_output=True,
                          text=True, timeout=120, check=False)
    output = done.stdout + done.stderr
    assert done.returncode != 0
    assert KEY not in output and "LEAKCHECK-0123" not in output
    assert "Traceback" not in output
    assert "key" in output.lower()  # the user is told what is wrong


def test_log_lines_and_chained_tracebacks_are_scrubbed(capsys: pytest.CaptureFixture[str]) -> None:
    import logging

    from desktop_app.core.log_setup import CurrentStderrHandler, RedactingFormatter

    handler = CurrentStderrHandler()
    handler.setFormatter(RedactingFormatter(lambda: [KEY]))
    log = logging.getLogger("leak-test")
    log.addHandler(handler)
    log.propagate = False
    try:
        try:
            try:
                raise PermissionError(f"server said: bad key {KEY}")
            except PermissionError as inner:
                raise RuntimeError("request failed") from inner
        except RuntimeError:
            log.exception("with %s in the message too", KEY)
    finally:
        log.removeHandler(handler)
    err = capsys.readouterr().err
    assert "server said: bad key [REDACTED]" in err and "[REDACTED] in the message" in err
    assert KEY not in err
