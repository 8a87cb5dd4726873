"""`chat` and `ask` take the prompt as words, from standard input ('-') or from --file."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "llm"))
from fake_openai_server import Reply, chunk, fake_server, use_endpoint  # noqa: F401

pytestmark = pytest.mark.usefixtures("app_home")


def _run(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "desktop_app", *args], input=stdin,
                          capture_output=True, text=True, timeout=120, check=False)


@pytest.mark.parametrize("how", ["stdin", "file"])
def test_a_huge_prompt_reaches_the_model_whole(how: str, fake_server, app_home: Path,  # noqa: F811
                                               tmp_path: Path) -> None:
    use_endpoint(app_home, fake_server.base_url)
    fake_server.add(Reply(sse=[chunk("Got it.", finish_reason="stop")]))
    prompt = "word " * 400_000 + "THE-END"  # 2 MB: more than a command line takes
    if how == "stdin":
        done = _run("chat", "-", stdin=prompt)
    else:
        path = tmp_path / "prompt.txt"
        path.write_text(prompt)
        done = _run("chat", "--file", str(path))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "Got it."
    sent = fake_server.requests[0].json["messages"][-1]["content"]
    assert sent == prompt


@pytest.mark.parametrize("args", [["ask"], ["chat", "-"], ["ask", "--file", "/nonexistent/q.txt"],
                                  ["ask", "words", "--file", "/etc/hostname"]])
def test_a_missing_or_unreadable_prompt_is_a_clear_error(args: list[str]) -> None:
    done = _run(*args)
    assert done.returncode == 2 and done.stderr.startswith("error: ")
    assert "Traceback" not in done.stderr
