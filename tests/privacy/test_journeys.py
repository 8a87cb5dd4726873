"""The main journeys under an audit hook that sees every name lookup and connection
(issue 25). The "hosted" model and the "hub" are real servers on this computer's LAN
address, which the app treats as another computer. With the offline lock on, not one
connection or lookup goes off the computer; with it off, every connection off the
computer has its requests in the ledger, byte for byte what the servers received."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "llm"))
sys.path.insert(0, str(Path(__file__).parents[1]))
from fake_openai_server import (  # noqa: F401
    FakeOpenAIServer,
    Reply,
    chunk,
    completion,
    lan_server,
    this_computers_lan_address,
    use_endpoint,
)
from hub_fakes import FakeHub
from network_audit import lan_hub, network, off_computer  # noqa: F401

from desktop_app.cli import main
from desktop_app.core import egress


def _journeys(server: FakeOpenAIServer, app_home: Path, tmp_path: Path,
              offline: bool) -> list[int]:
    """chat, ask with a file tool (allowed), hub search, list and download."""
    workspace = tmp_path / "workspace"
    workspace.mkdir(exist_ok=True)
    (workspace / "todo.md").write_text("- call the plumber\n")
    use_endpoint(app_home, server.base_url, tools={"workspace": str(workspace)})
    call = {"id": "c1", "type": "function",
            "function": {"name": "read_file", "arguments": json.dumps({"path": "todo.md"})}}
    select = {"id": "s", "type": "function", "function": {
        "name": "select_tools", "arguments": json.dumps({"tools": ["read_file"]})}}
    server.add(Reply(sse=[chunk("Hello."), chunk(finish_reason="stop")]),
               completion(None, tool_calls=[select], finish_reason="tool_calls"),
               Reply(sse=[chunk(tool_calls=[{"index": 0, **call}], finish_reason="tool_calls")]),
               Reply(sse=[chunk("Call the plumber.", finish_reason="stop")]),
               Reply(sse=[chunk("Call the plumber.", finish_reason="stop")]))
    flag = ["--offline"] if offline else []
    return [main([*flag, "chat", "hello"]),
            main([*flag, "ask", "--yes", "What is on my todo.md?"]),
            main([*flag, "models", "search", "tiny"]),
            main([*flag, "models", "pull", "acme/Tiny-GGUF"])]


def test_with_the_lock_on_nothing_goes_off_the_computer(
        lan_server, lan_hub: FakeHub, network, app_home: Path, tmp_path: Path,  # noqa: F811
        capsys: pytest.CaptureFixture[str]) -> None:
    codes = _journeys(lan_server, app_home, tmp_path, offline=True)
    assert all(code != 0 for code in codes)  # each one refused, with a message
    assert capsys.readouterr().err.count("offline lock is on") >= 4
    assert off_computer(network) == []
    assert lan_server.requests == [] and lan_hub.requests == []
    assert egress.ledger().entries() == []


def test_with_the_lock_off_every_request_off_the_computer_is_in_the_ledger(
        lan_server, lan_hub: FakeHub, network, app_home: Path, tmp_path: Path,  # noqa: F811
        capsys: pytest.CaptureFixture[str]) -> None:
    codes = _journeys(lan_server, app_home, tmp_path, offline=False)
    assert codes == [0, 0, 0, 0], capsys.readouterr().err
    rows = egress.ledger().entries()
    connected = {host for event, host in off_computer(network) if event == "socket.connect"}
    assert connected == {lan_server.host}
    assert {row.host for row in rows} == connected and not any(row.local for row in rows)
    model_rows = [row for row in rows if row.purpose == "chat completion"]
    assert [row.bytes_sent for row in model_rows] == lan_server.bytes_in
    assert [row.bytes_received for row in model_rows] == lan_server.bytes_out
    hub_rows = [row for row in rows if row.purpose != "chat completion"]
    assert len(hub_rows) == len(lan_hub.requests)
    assert "call the plumber" in json.dumps([row.content for row in model_rows])
