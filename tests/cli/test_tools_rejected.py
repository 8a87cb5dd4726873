"""A hosted model that refuses tool definitions (many Ollama and LM Studio models) is
switched to JSON mode once, told to the user once, and remembered in the settings."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "llm"))
from fake_openai_server import (  # noqa: F401
    Reply,
    chunk,
    completion,
    error_reply,
    fake_server,
    use_endpoint,
)

from desktop_app.cli import main

OLLAMA_REFUSAL = "registry.ollama.ai/library/gemma:2b does not support tools"


def test_a_refusal_of_tools_falls_back_to_json_mode_says_so_once_and_is_saved(
        fake_server, app_home: Path, capsys: pytest.CaptureFixture[str]) -> None:  # noqa: F811
    use_endpoint(app_home, fake_server.base_url)
    final = json.dumps({"type": "final_answer", "answer": "Hello there."})
    fake_server.add(error_reply(400, OLLAMA_REFUSAL, type_="api_error"),
                    completion(final), Reply(sse=[chunk("Hello there.", finish_reason="stop")]))
    assert main(["ask", "hi"]) == 0
    out, err = capsys.readouterr()
    assert "Hello there." in out and "error" not in err.lower()
    assert err.count("does not accept tool definitions") == 1 and "JSON" in err
    first, second = fake_server.requests[0].json, fake_server.requests[1].json
    assert "tools" in first and "tools" not in second
    assert "final_answer" in second["messages"][0]["content"]  # the JSON-mode system prompt
    saved = json.loads((app_home / "config" / "settings.json").read_text())
    assert saved["endpoints"][0]["tool_call"] is False

    # The next start reads the setting: no failed request first, and nothing to announce.
    fake_server.requests.clear()
    fake_server.add(completion(final), Reply(sse=[chunk("Hello there.", finish_reason="stop")]))
    assert main(["ask", "hi again"]) == 0
    out, err = capsys.readouterr()
    assert "Hello there." in out and "tool definitions" not in err
    assert "tools" not in fake_server.requests[0].json


def test_other_bad_requests_are_not_taken_for_a_refusal_of_tools(
        fake_server, app_home: Path, capsys: pytest.CaptureFixture[str]) -> None:  # noqa: F811
    use_endpoint(app_home, fake_server.base_url)
    fake_server.add(error_reply(400, "messages: field required"))
    assert main(["ask", "hi"]) != 0
    _, err = capsys.readouterr()
    assert "messages: field required" in err and "tool definitions" not in err
    saved = json.loads((app_home / "config" / "settings.json").read_text())
    assert saved["endpoints"][0].get("tool_call", True) is True
