"""The offline lock (issue 25, first part): with --offline nothing leaves the computer — a
hosted endpoint is refused before any DNS lookup or connection, with a message saying what
was blocked and how to allow it — while a server on this computer keeps working. Network
attempts are recorded with an audit hook (socket.getaddrinfo / socket.connect)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "llm"))
sys.path.insert(0, str(Path(__file__).parents[1]))
from fake_openai_server import Reply, chunk, fake_server, use_endpoint  # noqa: F401
from network_audit import network  # noqa: F401

from desktop_app.cli import main
from desktop_app.core import egress


def test_a_hosted_endpoint_is_refused_without_a_dns_lookup(
        app_home: Path, network: list[tuple[str, str]],  # noqa: F811
        capsys: pytest.CaptureFixture[str]) -> None:
    use_endpoint(app_home, "http://blocked.invalid/v1")
    assert main(["--offline", "ask", "Is this sent anywhere?"]) != 0
    err = capsys.readouterr().err
    assert "offline lock is on" in err and "blocked.invalid" in err
    assert "without" in err and "--offline" in err  # how to allow it
    assert not [entry for entry in network if "blocked.invalid" in entry[1]]
    assert not [entry for entry in network
                if entry[0] == "socket.connect" and not egress.is_local_host(entry[1])]


def test_a_server_on_this_computer_stays_allowed(
        fake_server, app_home: Path, network: list[tuple[str, str]],  # noqa: F811
        capsys: pytest.CaptureFixture[str]) -> None:
    use_endpoint(app_home, fake_server.base_url)
    fake_server.add(Reply(sse=[chunk("Paris.", finish_reason="stop")]))
    assert main(["--offline", "ask", "Capital of France?"]) == 0
    assert "Paris." in capsys.readouterr().out
    connects = [host for event, host in network if event == "socket.connect"]
    assert connects and all(egress.is_local_host(host) for host in connects)


def test_the_setting_turns_the_lock_on_for_every_command(
        app_home: Path, network: list[tuple[str, str]],  # noqa: F811
        capsys: pytest.CaptureFixture[str]) -> None:
    use_endpoint(app_home, "http://blocked.invalid/v1", privacy={"offline": True})
    assert main(["ask", "hello"]) != 0
    assert "offline lock is on" in capsys.readouterr().err
    assert not [entry for entry in network if "blocked.invalid" in entry[1]]


def test_the_model_hub_is_refused_under_the_lock(
        network: list[tuple[str, str]], capsys: pytest.CaptureFixture[str],  # noqa: F811
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_ENDPOINT", "https://hub.example.invalid")
    assert main(["--offline", "models", "search", "qwen"]) != 0
    err = capsys.readouterr().err
    assert "offline lock is on" in err and "hub.example.invalid" in err
    assert not [entry for entry in network if entry[0] == "socket.connect"
                and not egress.is_local_host(entry[1])]


@pytest.mark.parametrize(("host", "local"), [
    ("localhost", True), ("127.0.0.1", True), ("127.8.9.10", True), ("[::1]", True),
    ("::1", True), ("api.openai.com", False), ("10.0.0.5", False), ("localhost.evil.com",
                                                                      False),
    ("blocked.invalid", False), ("0x7f000001", False)])
def test_local_is_decided_from_the_text_alone(
        host: str, local: bool, network: list[tuple[str, str]]) -> None:  # noqa: F811
    assert egress.is_local_host(host) is local
    assert not [event for event, _ in network if event == "socket.getaddrinfo"]


def test_a_name_under_localhost_is_not_taken_for_this_computer(
        app_home: Path, network: list[tuple[str, str]],  # noqa: F811
        capsys: pytest.CaptureFixture[str]) -> None:
    """Found by an attack: 'user-secret-leak.localhost' counted as this computer, and the
    resolver sent the name to a DNS server."""
    assert not egress.is_local_host("user-secret-leak.localhost")
    use_endpoint(app_home, "http://user-secret-leak.localhost:8080/v1")
    assert main(["--offline", "ask", "hello"]) != 0
    assert "offline lock is on" in capsys.readouterr().err
    assert not [entry for entry in network if "secret" in entry[1]]
