"""``desktop-app ask``: streamed answer, progress on stderr, the SSE stream, errors."""

from __future__ import annotations

import json
from typing import Any

import pytest

from desktop_app.cli import main
from desktop_app.core.errors import LLMConnectionError
from desktop_app.core.llm.registry import ModelRegistry
from desktop_app.core.llm.testing import ScriptedLLM, json_action, json_final


def use_models(monkeypatch: pytest.MonkeyPatch, **models: ScriptedLLM) -> None:
    """The CLI builds its registry from settings; give it fake models instead."""
    registry = ModelRegistry()
    for name, llm in models.items():
        registry.register(name, llm)
    monkeypatch.setattr("desktop_app.cli.ask.build_registry", lambda settings: registry)


def script() -> ScriptedLLM:
    return ScriptedLLM([json_action("calculator", {"expression": "1234*5678"}),
                        json_final("7006652"), "1234 × 5678 = **7006652**"])


def test_ask_streams_the_answer_to_stdout_and_progress_to_stderr(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    use_models(monkeypatch, local=script())
    assert main(["ask", "what", "is", "1234*5678"]) == 0
    out, err = capsys.readouterr()
    assert out == "1234 × 5678 = **7006652**\n"
    assert '· calculator {"expression": "1234*5678"}' in err
    assert "→ 1234*5678 = 7006652" in err
    assert "[done: 2 iteration(s)" in err and "fake-model" in err


def test_ask_events_prints_the_sse_stream(monkeypatch: pytest.MonkeyPatch,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    llm = script()
    use_models(monkeypatch, local=llm)
    assert main(["ask", "--events", "what is 1234*5678"]) == 0
    out, _ = capsys.readouterr()
    blocks = [b for b in out.split("\n\n") if b]
    parsed = []
    for block in blocks:
        event_line, data_line = block.split("\n")
        parsed.append((event_line.removeprefix("event: "),
                       json.loads(data_line.removeprefix("data: "))))
    assert parsed[0] == ("step", {"type": "thinking", "status": "start", "iteration": 1})
    channel, done = parsed[-1]
    assert channel == "done" and done["answer"] == "1234 × 5678 = **7006652**"
    assert {"answer", "iterations", "usage", "elapsed"} <= set(done)
    assert llm.requests[0].messages[-1].content == "what is 1234*5678"


def test_ask_picks_the_model_by_name(monkeypatch: pytest.MonkeyPatch,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    other = ScriptedLLM([json_final("from other"), "from other"], model_id="other-model")
    use_models(monkeypatch, local=script(), other=other)
    assert main(["ask", "--model", "other", "--temperature", "0", "hi"]) == 0
    assert capsys.readouterr().out == "from other\n" and len(other.requests) == 2
    assert [r.temperature for r in other.requests] == [0.0, 0.0]


def test_ask_unknown_model_is_a_clear_error(monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    use_models(monkeypatch, local=script())
    assert main(["ask", "--model", "nope", "hi"]) == 2
    err = capsys.readouterr().err
    assert "No model named 'nope'" in err and "local" in err


def test_ask_reports_llm_failures_with_exit_code_1(monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    use_models(monkeypatch, local=ScriptedLLM([LLMConnectionError(
        "Cannot reach http://127.0.0.1:9.", hint="Start the server.")]))
    assert main(["ask", "hi"]) == 1
    err = capsys.readouterr().err
    assert "error: Cannot reach http://127.0.0.1:9. Start the server." in err
    assert "[failed:" in err


def test_ask_denies_confirmation_without_a_terminal(monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    from desktop_app.cli.common import make_confirmer
    from desktop_app.core.config.settings import Settings

    monkeypatch.setattr("sys.stdin.isatty", lambda: False)
    settings = Settings()
    settings.tools.always_allow = ["trusted"]
    confirm: Any = make_confirmer(settings, assume_yes=False)
    import asyncio

    assert asyncio.run(confirm("write_file", {"path": "x"})) is False
    assert asyncio.run(confirm("trusted", {})) is True
    assert asyncio.run(make_confirmer(Settings(), assume_yes=True)("write_file", {})) is True
    err = capsys.readouterr().err
    assert "Denied 'write_file'" in err and "stdin is not a terminal" in err
