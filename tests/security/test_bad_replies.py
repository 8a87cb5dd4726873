"""Malformed replies from an endpoint and a damaged database: a clear message, no traceback."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "llm"))
from fake_openai_server import Reply, fake_server, use_endpoint  # noqa: F401


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "desktop_app", *args], capture_output=True,
                          text=True, timeout=120, check=False)


BAD_REPLIES = {
    "truncated JSON body": Reply(body='{"id": "x", "choices": [{"mess'),
    "empty body": Reply(body=""),
    "HTML instead of JSON": Reply(body="<html><body>502 Bad Gateway</body></html>"),
    "SSE with broken JSON": Reply(sse=['{"choices": [{"delta": {"content": "Hi'], done=False),
    "SSE of the wrong shape": Reply(sse=[{"unexpected": [1, 2, 3]}]),
}


@pytest.mark.parametrize("name", sorted(BAD_REPLIES))
@pytest.mark.parametrize("command", ["chat", "ask"])
def test_a_malformed_reply_is_a_clear_error(name: str, command: str, fake_server,  # noqa: F811
                                            app_home: Path) -> None:
    use_endpoint(app_home, fake_server.base_url, name="hosted", model="gpt-x")
    for _ in range(8):
        fake_server.add(BAD_REPLIES[name])
    done = _run(command, "hello")
    output = done.stdout + done.stderr
    assert "Traceback" not in output, output[-2000:]
    assert done.returncode != 0 or done.stdout.strip()  # an error, or an answer it could use
    if done.returncode != 0:
        assert "error" in done.stderr.lower()


def test_a_damaged_database_says_what_to_do(app_home: Path) -> None:
    assert _run("conversations", "list").returncode == 0  # creates the database
    [database] = [p for p in app_home.rglob("*.sqlite3")] or [p for p in app_home.rglob("*.db")]
    data = bytearray(database.read_bytes())
    for offset in range(100, len(data), 97):  # scribble over every page after the header
        data[offset] ^= 0xFF
    database.write_bytes(bytes(data))
    for args in (["conversations", "list"], ["conversations", "search", "x"],
                 ["conversations", "export", "--format", "json"]):
        done = _run(*args)
        assert "Traceback" not in done.stderr, (args, done.stderr[-1500:])
        assert done.returncode != 0 and "error" in done.stderr.lower(), args
