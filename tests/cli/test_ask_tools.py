"""`desktop-app ask` runs with the configured MCP servers' tools, through a real HTTP model.

The model is a scripted OpenAI-compatible server on loopback (it asks for the MCP tool,
then answers); the MCP server is a real stdio process written with the official SDK.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "llm"))
from fake_openai_server import Reply, chunk, completion, fake_server, use_endpoint  # noqa: F401

from desktop_app.cli import main

MCP_SERVER = Path(__file__).resolve().parents[1] / "tools" / "mcp_servers" / "notes_server.py"


def test_ask_calls_an_mcp_tool_and_answers(fake_server, app_home: Path,  # noqa: F811
                                           capsys: pytest.CaptureFixture[str]) -> None:
    use_endpoint(app_home, fake_server.base_url, mcp_servers=[
        {"name": "notes", "command": [sys.executable, str(MCP_SERVER)]}])
    call = {"id": "call_1", "type": "function",
            "function": {"name": "notes__add", "arguments": json.dumps({"a": 2, "b": 3})}}
    # 10 built-in + 6 MCP tools: above the threshold of 12, so a selection call comes first.
    select = {"id": "sel", "type": "function", "function": {
        "name": "select_tools", "arguments": json.dumps({"tools": ["notes__add", "calculator"]})}}
    # Loop calls stream (a direct answer is shown as it is written); selection does not.
    fake_server.add(
        completion(None, tool_calls=[select], finish_reason="tool_calls"),
        Reply(sse=[chunk(tool_calls=[{"index": 0, **call}], finish_reason="tool_calls")]),
        Reply(sse=[chunk("2 + 3 = 5", finish_reason="stop")]),
        Reply(sse=[chunk("The sum "), chunk("is **5**.", finish_reason="stop")]),
    )
    assert main(["ask", "add 2 and 3 with the notes server"]) == 0
    out, err = capsys.readouterr()
    assert out.strip() == "The sum is **5**."
    assert "notes__add" in err
    # The tool result reached the model in the message right after its tool call.
    loop_tools = {t["function"]["name"] for t in fake_server.requests[1].json["tools"]}
    assert loop_tools == {"notes__add", "calculator"}
    second = fake_server.requests[2].json
    tool_messages = [m for m in second["messages"] if m["role"] == "tool"]
    assert tool_messages and "5" in tool_messages[0]["content"]


def test_an_mcp_server_that_cannot_start_is_reported_and_the_question_still_answered(
        fake_server, app_home: Path, capsys: pytest.CaptureFixture[str]) -> None:  # noqa: F811
    use_endpoint(app_home, fake_server.base_url,
                 mcp_servers=[{"name": "gone", "command": ["/nonexistent/mcp-server"]}])
    # A direct answer streams from the loop's one call: it is not generated twice.
    fake_server.add(Reply(sse=[chunk("Hello.", finish_reason="stop")]))
    assert main(["ask", "hi"]) == 0
    out, err = capsys.readouterr()
    assert out.strip() == "Hello."
    assert "MCP server 'gone' is unavailable" in err
