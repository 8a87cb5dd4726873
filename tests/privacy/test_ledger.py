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
