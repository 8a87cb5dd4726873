"""The privacy ledger (issue 25): every request that leaves the computer is recorded with
where, why, bytes both ways and the exact content sent, checked against what real loopback
servers received; keys never reach it; the lock's refusals leave nothing to record."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "llm"))
sys.path.insert(0, str(Path(__file__).parents[1]))
from fake_openai_server import Reply, chunk, completion, fake_server, use_endpoint  # noqa: F401
from hub_fakes import FakeHub, HubFile, serve_hub, write_tiny_gguf

from desktop_app.cli import main
from desktop_app.core import egress
from desktop_app.core.catalogue.hub import download_model, list_quantisations, search_models
from desktop_app.core.config.secrets import set_api_key

SECRET = "sk-ledger-test-0123456789abcdef"


def _rows() -> list[egress.EgressRecord]:
    return egress.ledger().entries()


def test_a_hosted_chat_is_recorded_byte_for_byte_without_the_key(
        fake_server, app_home: Path, capsys: pytest.CaptureFixture[str]) -> None:  # noqa: F811
    use_endpoint(app_home, fake_server.base_url, endpoint={"api_key_ref": "endpoint:scripted"})
    set_api_key("endpoint:scripted", SECRET)
    fake_server.add(Reply(sse=[chunk("Paris is the capital."),
                               chunk(finish_reason="stop", usage=(12, 5))]))
    assert main(["chat", "Capital of France? My key is " + SECRET]) == 0
    assert "Paris" in capsys.readouterr().out
    rows = _rows()
    assert len(rows) == len(fake_server.requests) >= 1
    for row, body_in, body_out, seen in zip(rows, fake_server.bytes_in, fake_server.bytes_out,
                                            fake_server.requests, strict=True):
        assert row.host == "127.0.0.1" and row.local
        assert row.purpose == "chat completion" and row.method == "POST"
        assert row.bytes_sent == body_in and row.bytes_received == body_out
        sent = json.loads(row.content)
        assert sent["messages"] == json.loads(
            json.dumps(seen.json["messages"]).replace(SECRET, "[key removed]"))
        assert row.status == 200
    # The key went to the server (in the header and in the user's own words), never to the
    # ledger's file.
    assert fake_server.requests[0].headers["authorization"] == f"Bearer {SECRET}"
    assert SECRET.encode() not in egress.ledger().path.read_bytes()


def test_the_ledger_command_lists_shows_exports_and_clears(
        fake_server, app_home: Path, capsys: pytest.CaptureFixture[str]) -> None:  # noqa: F811
    use_endpoint(app_home, fake_server.base_url)
    fake_server.add(Reply(sse=[chunk("Hello there."), chunk(finish_reason="stop")]))
    assert main(["chat", "Say hello to the ledger"]) == 0
    capsys.readouterr()
    assert main(["ledger"]) == 0
    listing = capsys.readouterr().out
    assert "127.0.0.1 (this computer)" in listing and "chat completion" in listing
    assert main(["ledger", "--json"]) == 0
    [row] = json.loads(capsys.readouterr().out)
    assert main(["ledger", "--show", str(row["id"])]) == 0
    assert "Say hello to the ledger" in capsys.readouterr().out
    assert main(["ledger", "--remote-only"]) == 0
    assert "Nothing has left this computer" in capsys.readouterr().out
    assert main(["ledger", "--since", "not a date"]) == 2
    assert "not a date" in capsys.readouterr().err
    assert main(["ledger", "--clear"]) == 0
    assert "Deleted 1 ledger row" in capsys.readouterr().out
    assert b"Say hello to the ledger" not in egress.ledger().path.read_bytes()
    assert _rows() == []


def test_a_request_the_lock_refuses_is_not_in_the_ledger(
        app_home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    use_endpoint(app_home, "http://blocked.invalid/v1")
    try:
        assert main(["--offline", "chat", "hello"]) != 0
    finally:
        egress.set_offline(False)
    assert "offline lock is on" in capsys.readouterr().err
    assert _rows() == []


@pytest.fixture
def hub(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeHub]:
    files = tmp_path / "hub-files"
    files.mkdir()
    tiny = write_tiny_gguf(files / "tiny-Q4_K_M.gguf", data_bytes=256 * 1024)
    fake = FakeHub(repos={"acme/Tiny-GGUF": {"tiny-Q4_K_M.gguf": HubFile(tiny)}})
    for served in serve_hub(fake):
        monkeypatch.setenv("HF_ENDPOINT", served.url)
        monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
        yield served


def test_hub_search_and_downloads_are_recorded_with_their_purpose(
        hub: FakeHub, tmp_path: Path) -> None:
    search_models("tiny")
    [model] = list_quantisations("acme/Tiny-GGUF")
    download_model(model, tmp_path / "models")
    rows = _rows()
    purposes = [row.purpose for row in rows]
    assert purposes[0] == "search the hub"
    assert "list the files of acme/Tiny-GGUF" in purposes
    downloads = [row for row in rows if row.purpose == "download"]
    size = hub.repos["acme/Tiny-GGUF"]["tiny-Q4_K_M.gguf"].path.stat().st_size
    assert downloads and sum(row.bytes_received for row in downloads) == size
    assert all(row.content == f"GET {row.url}" for row in downloads)
    assert len(rows) == len(hub.requests)  # every request the hub saw, and no other


def test_rows_carry_the_conversation_and_message_they_served(
        fake_server, app_home: Path) -> None:  # noqa: F811
    import asyncio

    from desktop_app.core.llm.openai_adapter import OpenAICompatibleLLM
    from desktop_app.core.llm.types import ChatMessage

    fake_server.add(completion("one"), completion("two"))
    llm = OpenAICompatibleLLM(base_url=fake_server.base_url, model="m")

    async def ask(conversation: str, message: str) -> None:
        egress.serve_in_this_task(conversation, message)
        await llm.chat([ChatMessage.user("hi")])

    async def both() -> None:  # two chats at once: each task keeps its own
        await asyncio.gather(ask("c1", "m1"), ask("c2", "m2"))

    asyncio.run(both())
    assert sorted((r.conversation_id, r.message_id) for r in _rows()) == [
        ("c1", "m1"), ("c2", "m2")]
    assert egress.human_bytes(999) == "999 B" and egress.human_bytes(3200) == "3.2 kB"


def test_no_key_the_app_knows_and_no_url_password_reaches_the_ledger(
        app_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Found by an attack: only the destination's own key was removed; another endpoint's
    key, the hub token and a password in a base URL were kept."""
    from desktop_app.core.config.settings import EndpointModelConfig, Settings, save_settings

    other_key = "sk-other-endpoint-0123456789"
    hub_token = "hf_abcdefghijklmnopqrstuvwxyz0123"
    monkeypatch.setenv("HF_TOKEN", hub_token)
    set_api_key("endpoint:other", other_key)
    save_settings(Settings(endpoints=[EndpointModelConfig(
        name="other", base_url="https://other.example.com/v1", model="m",
        api_key_ref="endpoint:other")]))
    egress.ledger().record(egress.EgressRecord(
        host="api.example.com", url="https://alice:s3cret-pass@api.example.com/v1/chat",
        method="POST", purpose="chat completion", bytes_sent=10, bytes_received=0,
        content=f"my keys: {other_key} and {hub_token}", local=False))
    [row] = _rows()
    assert other_key not in row.content and hub_token not in row.content
    assert "s3cret-pass" not in row.url and row.url.startswith("https://alice:[removed]@")
    raw = egress.ledger().path.read_bytes()
    assert other_key.encode() not in raw and b"s3cret-pass" not in raw


def test_a_request_is_in_the_ledger_as_it_leaves_even_if_its_answer_never_ends(
        fake_server) -> None:  # noqa: F811
    """Found by an attack: a row was written only when the answer was closed, so a request
    whose stream was cut off by stopping the app was sent and never recorded."""
    import httpx2

    fake_server.add(Reply(sse=[chunk("a"), chunk("b"), chunk(finish_reason="stop")]))
    with egress.client("chat completion") as client, client.stream(
            "POST", f"{fake_server.base_url}/chat/completions",
            json={"messages": [{"role": "user", "content": "cut me off"}]}) as response:
        assert response.status_code == 200
        [row] = _rows()  # written already, before the answer was read
        assert row.bytes_sent == fake_server.bytes_in[0] and "cut me off" in row.content
        assert row.error == "no complete answer recorded"
        response.read()
    [row] = _rows()
    assert row.error is None and row.bytes_received == fake_server.bytes_out[0]
    assert isinstance(client, httpx2.Client)


def test_nothing_is_sent_while_the_ledger_cannot_be_written(
        fake_server, app_home: Path, capsys: pytest.CaptureFixture[str]) -> None:  # noqa: F811
    """Found by an attack: with the ledger file unwritable, requests went out unrecorded."""
    use_endpoint(app_home, fake_server.base_url)
    book = egress.ledger()
    book.path.parent.mkdir(parents=True, exist_ok=True)
    book.path.mkdir()  # a folder where the file should be: every write fails
    fake_server.add(Reply(sse=[chunk("first"), chunk(finish_reason="stop")]))
    main(["chat", "first message"])  # sent: the failure shows only when it is written
    book.flush()
    capsys.readouterr()
    fake_server.add(Reply(sse=[chunk("second"), chunk(finish_reason="stop")]))
    assert main(["chat", "second message"]) != 0
    err = capsys.readouterr().err
    assert "privacy ledger" in err and "cannot be written" in err and "Nothing was sent" in err
    assert len(fake_server.requests) == 1  # the second never left
    book.path.rmdir()  # fixed: requests go (and are recorded) again
    fake_server.add(Reply(sse=[chunk("third"), chunk(finish_reason="stop")]))
    assert main(["chat", "third message"]) == 0
    assert [row.content.count("third message") for row in _rows()] == [1]


def test_a_command_stopped_mid_answer_leaves_its_request_in_the_ledger(
        fake_server, app_home: Path) -> None:  # noqa: F811
    """The attack's case end to end: `kill` during a streamed answer."""
    import os
    import signal
    import subprocess
    import time

    use_endpoint(app_home, fake_server.base_url)
    fake_server.add(Reply(sse=[chunk(f"word{i} ") for i in range(200)], event_delay=0.05))
    process = subprocess.Popen(
        [sys.executable, "-c", ("import sys; from desktop_app.cli import main; "
                               "raise SystemExit(main(sys.argv[1:]))"),
         "chat", "a long answer please"],
        env={**os.environ, "DESKTOP_APP_HOME": str(app_home)},
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert process.stdout is not None
    process.stdout.read(20)  # the answer is streaming
    process.send_signal(signal.SIGTERM)
    assert process.wait(30) == 128 + signal.SIGTERM
    time.sleep(0.1)
    [row] = _rows()
    assert "a long answer please" in row.content and row.bytes_sent == fake_server.bytes_in[0]
