"""Nothing sent unasked (issue 25): the user's files reach a model on another computer only
after the user allowed it, once per conversation; a model on this computer needs no consent.

The "hosted" model is a recording OpenAI-compatible server on this computer's LAN address
(to the app, another computer: its host is not localhost); the file holds a password that
must not appear in any request the server received unless the user said yes."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "llm"))
from fake_openai_server import (  # noqa: F401
    FakeOpenAIServer,
    Reply,
    chunk,
    completion,
    fake_server,
    lan_server,
    use_endpoint,
)

from desktop_app.cli import main
from desktop_app.core.tools.sharing import ShareConsent, remote_destination, terminal_ask

PASSWORD = "db_password=hunter2-xyzzy"


def _script(server: FakeOpenAIServer) -> None:
    """Tool selection, a read_file call, then the answer (twice over: enough for any path)."""
    select = {"id": "sel", "type": "function", "function": {
        "name": "select_tools", "arguments": json.dumps({"tools": ["read_file"]})}}
    call = {"id": "call_1", "type": "function",
            "function": {"name": "read_file", "arguments": json.dumps({"path": "secrets.env"})}}
    server.add(completion(None, tool_calls=[select], finish_reason="tool_calls"),
               Reply(sse=[chunk(tool_calls=[{"index": 0, **call}], finish_reason="tool_calls")]),
               Reply(sse=[chunk("Done.", finish_reason="stop")]),
               Reply(sse=[chunk("Keep secrets out of git.", finish_reason="stop")]),
               Reply(sse=[chunk("Keep secrets out of git.", finish_reason="stop")]))


def _setup(app_home: Path, tmp_path: Path, server: FakeOpenAIServer) -> None:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    (workspace / "secrets.env").write_text(f"{PASSWORD}\n")
    use_endpoint(app_home, server.base_url, tools={"workspace": str(workspace)})
    _script(server)


def _sent(server: FakeOpenAIServer) -> str:
    return json.dumps([request.json for request in server.requests])


def test_a_hosted_model_gets_no_file_when_nobody_can_say_yes(
        lan_server, app_home: Path, tmp_path: Path,  # noqa: F811
        capsys: pytest.CaptureFixture[str]) -> None:
    _setup(app_home, tmp_path, lan_server)
    assert main(["ask", "Is it safe to commit secrets.env to git?"]) == 0
    err = capsys.readouterr().err
    assert "Kept local" in err and lan_server.host in err and "--yes" in err
    assert len(lan_server.requests) >= 3  # the model did ask for the file, and went on
    assert "hunter2" not in _sent(lan_server)
    assert "did not run and nothing was sent" in _sent(lan_server)  # the model was told


def test_a_hosted_model_gets_the_file_once_the_user_allowed_it(
        lan_server, app_home: Path, tmp_path: Path,  # noqa: F811
        capsys: pytest.CaptureFixture[str]) -> None:
    _setup(app_home, tmp_path, lan_server)
    assert main(["ask", "--yes", "Is it safe to commit secrets.env to git?"]) == 0
    assert "hunter2" in _sent(lan_server)


def test_a_model_on_this_computer_needs_no_consent(
        fake_server, app_home: Path, tmp_path: Path,  # noqa: F811
        capsys: pytest.CaptureFixture[str]) -> None:
    _setup(app_home, tmp_path, fake_server)
    assert main(["ask", "Is it safe to commit secrets.env to git?"]) == 0
    assert "Kept local" not in capsys.readouterr().err
    assert "hunter2" in _sent(fake_server)  # it never left the computer


def test_the_answer_is_asked_once_and_holds_for_the_conversation() -> None:
    asked: list[tuple[str, str]] = []

    async def ask(destination: str, tool: str, args: dict[str, Any]) -> bool:
        asked.append((destination, tool))
        return False

    remembered: list[bool] = []
    consent = ShareConsent("api.example.com", ask, on_decided=remembered.append)

    async def three_calls() -> list[bool]:
        return [await consent("read_file", {"path": "a"}),
                await consent("notes_find", {"query": "b"}),
                await consent("read_file", {"path": "c"})]

    import asyncio

    assert asyncio.run(three_calls()) == [False, False, False]
    assert asked == [("api.example.com", "read_file")] and remembered == [False]
    earlier = ShareConsent("api.example.com", ask, decided=True)
    assert asyncio.run(earlier("read_file", {"path": "a"})) and len(asked) == 1


def test_the_terminal_question_says_what_and_where() -> None:
    import asyncio

    out = io.StringIO()
    ask = terminal_ask(stdin=io.StringIO("maybe\ny\n"), stdout=out, interactive=True)
    assert asyncio.run(ask("api.example.com", "read_file", {"path": "secrets.env"}))
    text = out.getvalue()
    assert "api.example.com" in text and "secrets.env" in text and "Please answer y or n" in text
    no = terminal_ask(stdin=io.StringIO(""), stdout=io.StringIO(), interactive=True)
    assert not asyncio.run(no("api.example.com", "read_file", {"path": "x"}))


@pytest.mark.parametrize(("url", "remote"), [
    ("https://api.openai.com/v1", "api.openai.com"), ("http://127.0.0.1:8080/v1", None),
    ("http://localhost:11434/v1", None), ("http://[::1]:1234/v1", None),
    ("http://192.168.1.20:1234/v1", "192.168.1.20")])
def test_which_models_are_on_another_computer(url: str, remote: str | None) -> None:
    class Hosted:
        base_url = url

    assert remote_destination(Hosted()) == remote
    assert remote_destination(object()) is None  # an in-process model


def test_a_comparison_never_sends_files_to_a_hosted_model(
        lan_server, app_home: Path, tmp_path: Path,  # noqa: F811
        capsys: pytest.CaptureFixture[str]) -> None:
    _setup(app_home, tmp_path, lan_server)
    main(["compare", "--model", "scripted", "Is it safe to commit secrets.env to git?"])
    assert len(lan_server.requests) >= 3  # the model asked for the file and went on
    assert "hunter2" not in _sent(lan_server)


def test_every_run_kind_keeps_files_from_a_host_nobody_was_asked_about() -> None:
    """make_agent is the one door (DAG steps, the API server's agent, Compare, ask): a
    model on another computer without a gate for its host gets nothing (found by an
    attack: `ask --dag` read a file for a hosted model without asking)."""
    import asyncio

    from desktop_app.core.agent.factory import make_agent
    from desktop_app.core.llm.openai_adapter import OpenAICompatibleLLM
    from desktop_app.core.tools.base import ToolRegistry
    from desktop_app.core.tools.sharing import ShareGates

    hosted_a = OpenAICompatibleLLM(base_url="https://a.example.com/v1", model="m")
    hosted_b = OpenAICompatibleLLM(base_url="https://b.example.com/v1", model="m")
    local = OpenAICompatibleLLM(base_url="http://127.0.0.1:1234/v1", model="m")
    assert asyncio.run(make_agent(hosted_a, ToolRegistry()).share("read_file", {})) is False
    assert make_agent(local, ToolRegistry()).share is None

    asked: list[str] = []

    async def yes(destination: str, _tool: str, _args: dict[str, Any]) -> bool:
        asked.append(destination)
        return True

    gates = ShareGates(yes, decided={"b.example.com": False})
    for_a = make_agent(hosted_a, ToolRegistry(), share=gates).share
    assert asyncio.run(for_a("read_file", {})) and asked == ["a.example.com"]
    # Allowing one provider allows no other: b was kept local earlier in this chat.
    for_b = make_agent(hosted_b, ToolRegistry(), share=gates).share
    assert asyncio.run(for_b("read_file", {})) is False and asked == ["a.example.com"]
    # A consent given for a's host is not taken for b's.
    assert asyncio.run(make_agent(hosted_b, ToolRegistry(), share=for_a).share(
        "read_file", {})) is False
