"""MCP: a real stdio server (tests/tools/mcp_servers/notes_server.py, written with the same SDK)
whose tools are listed, namespaced and called — directly and through the agent — plus crashes,
hangs, servers that do not start, streamable HTTP on loopback, and tool selection with many tools.
"""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from desktop_app.core.agent import ReActAgent
from desktop_app.core.agent.events import Confirm, Event, Phase
from desktop_app.core.config.settings import McpServerConfig
from desktop_app.core.errors import ConfigError, ToolError
from desktop_app.core.llm.testing import ScriptedLLM, json_action, json_final, tool_call_reply
from desktop_app.core.tools.base import ToolRegistry
from desktop_app.core.tools.confirmation import Confirmer
from desktop_app.core.tools.mcp_client import McpConnection, McpManager

pytestmark = pytest.mark.anyio

SERVER = Path(__file__).parent / "mcp_servers" / "notes_server.py"


def config(name: str = "notes", *extra: str) -> McpServerConfig:
    return McpServerConfig(name=name, command=[sys.executable, str(SERVER), *extra])


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie (exited, not yet reaped) counts as gone.
    try:
        return Path(f"/proc/{pid}/status").read_text().find("State:\tZ") == -1
    except OSError:
        return True


async def test_tools_are_listed_namespaced_with_read_only_from_annotations() -> None:
    async with McpManager([config()]) as manager:
        tools = {t.name: t for t in manager.tools()}
        assert {"notes__add", "notes__remember", "notes__pid", "notes__crash", "notes__hang",
                "notes__fail"} == set(tools)
        assert tools["notes__add"].read_only is True       # readOnlyHint=True
        assert tools["notes__remember"].read_only is False  # no hint: ask the user
        assert tools["notes__add"].description == "Add two integers."
        assert tools["notes__add"].parameters["required"] == ["a", "b"]
        assert (await tools["notes__add"].run({"a": 2, "b": 40})).text == "42"


async def test_tool_reported_error_is_an_error_result() -> None:
    async with McpManager([config()]) as manager:
        result = await next(t for t in manager.tools() if t.name == "notes__fail").run({})
        assert result.error and "reported an error" in result.error


async def test_agent_calls_an_mcp_tool_native_mode() -> None:
    async with McpManager([config()]) as manager:
        registry = ToolRegistry()
        manager.register_into(registry)
        llm = ScriptedLLM([tool_call_reply(("notes__add", {"a": 20, "b": 22})), "It is 42."],
                          tool_call=True)
        result = await ReActAgent(llm, registry).run("what is 20+22?")
        [step] = result.steps
        assert (step.tool, step.observation, step.error) == ("notes__add", "42", None)
        assert result.answer == "It is 42."
        # The model was offered the namespaced tools with their schemas.
        offered = {spec["function"]["name"] for spec in llm.requests[0].tools or []}
        assert "notes__add" in offered


async def test_agent_calls_an_mcp_tool_json_mode() -> None:
    async with McpManager([config()]) as manager:
        registry = ToolRegistry(manager.tools())
        llm = ScriptedLLM([json_action("notes__add", {"a": 1, "b": 2}), json_final("3")])
        result = await ReActAgent(llm, registry).run("1+2?")
        assert result.steps[0].observation == "3" and result.answer == "3"
        assert "notes__add" in llm.requests[0].system_text


async def test_server_crashing_mid_call_gives_an_error_observation_and_the_run_completes() -> None:
    async with McpManager([config()], call_timeout=20) as manager:
        registry = ToolRegistry(manager.tools())
        first_pid = int((await registry.get("notes__pid").run({})).text)
        llm = ScriptedLLM([tool_call_reply(("notes__crash", {})),
                           tool_call_reply(("notes__pid", {})), "recovered"], tool_call=True)
        started = time.monotonic()
        result = await ReActAgent(llm, registry).run("crash it")
        assert time.monotonic() - started < 20
        crash, after = result.steps
        assert crash.error and "failed while running 'crash'" in crash.error
        assert "restarted on the next call" in crash.error
        # The next call reconnected to a fresh server process.
        assert after.error is None and int(after.observation) != first_pid
        assert not _alive(first_pid)
        assert result.answer == "recovered"


async def test_hanging_call_times_out_and_the_server_is_restarted() -> None:
    async with McpManager([config()], call_timeout=1.5) as manager:
        registry = ToolRegistry(manager.tools())
        hung_pid = int((await registry.get("notes__pid").run({})).text)
        llm = ScriptedLLM([tool_call_reply(("notes__hang", {})),
                           tool_call_reply(("notes__add", {"a": 1, "b": 1})), "ok"], tool_call=True)
        started = time.monotonic()
        result = await ReActAgent(llm, registry).run("hang")
        assert time.monotonic() - started < 15
        hang, add = result.steps
        assert hang.error and "did not answer 'hang' within 1.5 s" in hang.error
        assert add.error is None and add.observation == "2"
        for _ in range(50):  # the hung process is killed in the background
            if not _alive(hung_pid):
                break
            await asyncio.sleep(0.1)
        assert not _alive(hung_pid)


async def test_mcp_tool_without_read_only_hint_asks_first() -> None:
    async with McpManager([config()]) as manager:
        events: list[Event] = []
        confirmer = Confirmer()

        def on_event(event: Event) -> None:
            events.append(event)
            if isinstance(event, Confirm):
                asyncio.get_running_loop().call_soon(confirmer.answer, event.request_id, False)

        confirmer.emit = on_event
        llm = ScriptedLLM([tool_call_reply(("notes__remember", {"key": "k", "text": "t"}),
                                           ("notes__add", {"a": 1, "b": 1})), "ok"], tool_call=True)
        result = await ReActAgent(llm, ToolRegistry(manager.tools()), confirm=confirmer).run(
            "remember", on_event=on_event)
        remember, add = result.steps
        assert remember.error and "declined" in remember.error
        assert add.error is None  # read-only: no question asked
        assert [e.tool_name for e in events if isinstance(e, Confirm)] == ["notes__remember"]


async def test_server_that_fails_to_start_is_reported_and_others_still_work() -> None:
    broken = McpServerConfig(name="broken", command=[
        sys.executable, "-c", "import sys; print('missing module xyz', file=sys.stderr); sys.exit(2)"])
    missing = McpServerConfig(name="missing", command=["/nonexistent/mcp-server"])
    async with McpManager([config(), broken, missing], connect_timeout=20) as manager:
        status = {row["name"]: row for row in manager.status()}
        assert status["notes"]["connected"] and status["notes"]["tools"] == 6
        assert not status["broken"]["connected"]
        assert "could not be started" in status["broken"]["error"]
        assert "missing module xyz" in status["broken"]["error"]  # the server's own words
        assert "not found" in status["missing"]["error"]
        assert {t.name.split("__")[0] for t in manager.tools()} == {"notes"}


async def test_a_server_printing_its_token_never_gets_it_into_the_log_or_the_error() -> None:
    """Found by an attack: the server's stderr went to its log file unscrubbed."""
    token = "ghp_TOKEN-for-the-mcp-server-0123456789"
    leaky = McpServerConfig(name="leaky", env={"GITHUB_TOKEN": token}, command=[
        sys.executable, "-c",
        ("import os, sys; print('auth failed with', os.environ['GITHUB_TOKEN'], file=sys.stderr);"
         " sys.exit(3)")])
    connection = McpConnection(leaky, connect_timeout=20)
    with pytest.raises(ToolError) as failure:
        await connection.connect()
    await connection.close()
    assert "auth failed with [REDACTED]" in str(failure.value)
    log_text = connection.log_path.read_text()
    assert "auth failed with [REDACTED]" in log_text and token not in log_text


async def test_call_after_a_failed_start_is_an_error_not_an_exception() -> None:
    connection = McpConnection(McpServerConfig(name="gone", command=["/nonexistent/x"]))
    result = await connection.call("anything", {})
    assert result.error and "could not be started" in result.error


async def test_stop_ends_the_server_process() -> None:
    manager = McpManager([config()])
    await manager.start()
    pid = int((await next(t for t in manager.tools() if t.name == "notes__pid").run({})).text)
    assert _alive(pid)
    await manager.stop()
    assert not _alive(pid)


def test_configuration_errors_are_clear() -> None:
    with pytest.raises(ConfigError, match="not on this computer"):
        McpConnection(McpServerConfig(name="r", transport="http", url="https://example.com/mcp"))
    with pytest.raises(ConfigError, match="has no command"):
        McpConnection(McpServerConfig(name="e"))
    manager = McpManager([config("same"), config("same"),
                          McpServerConfig(name="off", command=["x"], enabled=False)])
    assert len(manager.connections) == 1 and "Two MCP servers" in manager.errors["same"]


@pytest.fixture
def http_server() -> Iterator[str]:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    proc = subprocess.Popen([sys.executable, str(SERVER), "--http", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            break
        except OSError:
            time.sleep(0.1)
    yield f"http://127.0.0.1:{port}/mcp"
    proc.terminate()
    proc.wait(10)


async def test_streamable_http_server_on_loopback(http_server: str) -> None:
    cfg = McpServerConfig(name="web", transport="http", url=http_server)
    async with McpManager([cfg]) as manager:
        [add] = [t for t in manager.tools() if t.name == "web__add"]
        assert (await add.run({"a": 5, "b": 6})).text == "11"
    # Through the egress point: each request is in the privacy ledger, marked local.
    from desktop_app.core import egress

    rows = egress.ledger().entries()
    assert rows and all(r.local and r.purpose == "MCP server web" for r in rows)
    assert any('"a":5' in r.content.replace(" ", "") for r in rows)


async def test_many_mcp_tools_trigger_tool_selection_and_keep_the_prompt_small() -> None:
    async with McpManager([config("many", "--many", "15")]) as manager:
        registry = ToolRegistry(manager.tools())
        assert len(registry) == 21
        llm = ScriptedLLM(['{"tools": ["many__echo_7", "many__add"]}',
                           json_action("many__echo_7", {"text": "hi"}), json_final("echoed")])
        events: list[Event] = []
        result = await ReActAgent(llm, registry).run("echo hi with variant 7",
                                                     on_event=events.append)
        [phase] = [e for e in events if isinstance(e, Phase)]
        assert (phase.phase, phase.total_tools) == ("selecting_tools", 21)
        selection_prompt = llm.requests[0].last_user_text + llm.requests[0].system_text
        # A compact catalog: every tool's name and line, but no parameter schemas.
        assert "many__echo_14: Echo text back (variant 14)" in selection_prompt
        assert '"text"' not in selection_prompt
        loop_prompt = llm.requests[1].system_text
        assert "many__echo_7" in loop_prompt and "many__add" in loop_prompt
        assert "many__echo_8" not in loop_prompt and "many__crash" not in loop_prompt
        assert result.steps[0].observation == "echo7: hi"


async def test_server_that_never_answers_the_handshake_times_out() -> None:
    silent = McpServerConfig(name="silent", command=[sys.executable, "-c",
                                                     "import time; time.sleep(600)"])
    manager = McpManager([silent], connect_timeout=2)
    started = time.monotonic()
    status = await manager.start()
    assert time.monotonic() - started < 12
    assert "did not answer in time" in (status["silent"] or "")
    assert manager.tools() == []
    await manager.stop()


async def test_cancelling_a_run_during_a_call_leaves_the_server_usable() -> None:
    async with McpManager([config()], call_timeout=30) as manager:
        registry = ToolRegistry(manager.tools())
        call = asyncio.create_task(registry.get("notes__hang").run({"seconds": 20}))
        await asyncio.sleep(0.5)
        call.cancel()  # the user pressed Stop
        with pytest.raises(asyncio.CancelledError):
            await call
        started = time.monotonic()
        assert (await registry.get("notes__add").run({"a": 2, "b": 2})).text == "4"
        assert time.monotonic() - started < 10


async def test_http_server_not_running_is_reported_with_its_url() -> None:
    with socket.socket() as probe:  # a loopback port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = f"http://127.0.0.1:{port}/mcp"
    connection = McpConnection(McpServerConfig(name="web", transport="http", url=url),
                               connect_timeout=10)
    result = await connection.call("add", {"a": 1, "b": 2})
    assert result.error and "could not be started" in result.error and url in result.error
