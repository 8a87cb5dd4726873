"""Confirmation: Confirm events answered by the UI (allow/deny/always), and the terminal."""

from __future__ import annotations

import asyncio
import io
import json
from pathlib import Path
from typing import Any

import pytest
from tools_helpers import make_workspace

from desktop_app.core.agent import ReActAgent
from desktop_app.core.agent.events import Confirm, Event, IterationDone, IterationStart
from desktop_app.core.config.settings import Settings, load_settings, save_settings, settings_path
from desktop_app.core.llm.testing import ScriptedLLM, tool_call_reply
from desktop_app.core.tools.base import ToolRegistry
from desktop_app.core.tools.builtin.files import file_tools
from desktop_app.core.tools.confirmation import AlwaysAllowList, Confirmer, TerminalConfirmer
from desktop_app.core.tools.sandbox import Workspace

pytestmark = pytest.mark.anyio


class FakeUi:
    """Receives events like the UI does and answers Confirm events with a fixed choice."""

    def __init__(self, allow: bool, always: bool = False) -> None:
        self.allow, self.always = allow, always
        self.events: list[Event] = []
        self.confirmer: Confirmer | None = None

    def __call__(self, event: Event) -> None:
        self.events.append(event)
        if isinstance(event, Confirm):
            assert self.confirmer is not None
            # Answer later, from the event loop, as a click would arrive.
            asyncio.get_running_loop().call_soon(
                self.confirmer.answer, event.request_id, self.allow, self.always)

    def confirms(self) -> list[Confirm]:
        return [e for e in self.events if isinstance(e, Confirm)]


def make_confirmer(ui: FakeUi, settings: Settings | None = None) -> Confirmer:
    ui.confirmer = Confirmer(ui, settings=settings)
    return ui.confirmer


async def test_allow_emits_a_confirm_event_and_returns_true() -> None:
    ui = FakeUi(allow=True)
    assert await make_confirmer(ui)("write_file", {"path": "a.txt"}) is True
    [event] = ui.confirms()
    assert (event.tool_name, event.tool_args) == ("write_file", {"path": "a.txt"})
    assert event.channel == "confirm" and event.request_id


async def test_deny_returns_false() -> None:
    ui = FakeUi(allow=False)
    assert await make_confirmer(ui)("write_file", {}) is False


async def test_always_is_remembered_and_saved_in_settings() -> None:
    settings = Settings()
    save_settings(settings)
    ui = FakeUi(allow=True, always=True)
    confirmer = make_confirmer(ui, settings)
    assert await confirmer("write_file", {}) is True
    assert await confirmer("write_file", {"other": 1}) is True
    assert len(ui.confirms()) == 1  # asked once only
    assert settings.tools.always_allow == ["write_file"]
    assert confirmer.always.saving is not None  # written off the window's thread
    confirmer.always.saving.join(10)
    assert load_settings().tools.always_allow == ["write_file"]
    # A new confirmer (next app start) does not ask either.
    ui2 = FakeUi(allow=False)
    assert await make_confirmer(ui2, load_settings())("write_file", {}) is True
    assert ui2.confirms() == []
    # Other tools are still asked about.
    assert await make_confirmer(ui2, load_settings())("run_python", {}) is False


async def test_always_keeps_other_settings_changed_meanwhile() -> None:
    settings = Settings()
    save_settings(settings)
    changed = load_settings()
    changed.tools.workspace = "/some/folder"
    save_settings(changed)  # e.g. the settings page saved in between
    AlwaysAllowList(settings).add("write_file")
    stored = json.loads(settings_path().read_text())
    assert stored["tools"]["workspace"] == "/some/folder"
    assert stored["tools"]["always_allow"] == ["write_file"]


async def test_deny_with_always_does_not_remember() -> None:
    settings = Settings()
    ui = FakeUi(allow=False, always=True)
    assert await make_confirmer(ui, settings)("write_file", {}) is False
    assert settings.tools.always_allow == []


async def test_unanswered_request_times_out_as_denied() -> None:
    confirmer = Confirmer(lambda e: None, timeout=0.05)
    assert await confirmer("write_file", {}) is False
    assert confirmer.pending == []


async def test_answer_for_unknown_request_is_ignored() -> None:
    confirmer = Confirmer()
    assert confirmer.answer("nope", True) is False


async def test_deny_all_releases_waiting_requests() -> None:
    confirmer = Confirmer()
    task = asyncio.create_task(confirmer("write_file", {}))
    await asyncio.sleep(0)
    assert len(confirmer.pending) == 1
    confirmer.deny_all()
    assert await task is False


async def test_async_emit_is_awaited() -> None:
    seen: list[Event] = []
    confirmer = Confirmer()

    async def emit(event: Event) -> None:
        await asyncio.sleep(0)
        seen.append(event)
        confirmer.answer(event.request_id, True)  # type: ignore[attr-defined]

    confirmer.emit = emit
    assert await confirmer("x", {}) is True and len(seen) == 1


# --- through the engine ---------------------------------------------------------------------
def _agent(tmp_path: Path, ui: FakeUi, settings: Settings | None = None,
           calls: int = 1) -> tuple[ReActAgent, Workspace]:
    ws = Workspace(make_workspace(tmp_path))
    replies: list[Any] = [tool_call_reply(("write_file", {"path": f"out{i}.txt", "content": "hi"}))
                          for i in range(calls)]
    llm = ScriptedLLM([*replies, "done"], tool_call=True)
    agent = ReActAgent(llm, ToolRegistry(file_tools(ws)), confirm=make_confirmer(ui, settings))
    return agent, ws


async def test_agent_denied_write_becomes_an_error_and_writes_nothing(tmp_path: Path) -> None:
    ui = FakeUi(allow=False)
    agent, ws = _agent(tmp_path, ui)
    result = await agent.run("save hi", on_event=ui)
    [step] = result.steps
    assert step.error and "declined" in step.error
    assert not (ws.root / "out0.txt").exists()
    kinds = [type(e) for e in ui.events if isinstance(e, IterationStart | Confirm | IterationDone)]
    assert kinds == [IterationStart, Confirm, IterationDone]
    # The model saw the refusal as the tool's observation.
    tool_messages = [m for m in result.messages if m.role == "tool"]
    assert "declined" in tool_messages[0].content


async def test_agent_allowed_write_runs(tmp_path: Path) -> None:
    ui = FakeUi(allow=True)
    agent, ws = _agent(tmp_path, ui)
    result = await agent.run("save hi", on_event=ui)
    assert result.steps[0].error is None
    assert (ws.root / "out0.txt").read_text() == "hi"


async def test_agent_always_asks_only_once(tmp_path: Path) -> None:
    ui = FakeUi(allow=True, always=True)
    settings = Settings()
    agent, _ = _agent(tmp_path, ui, settings, calls=3)
    result = await agent.run("save three times", on_event=ui)
    assert [s.error for s in result.steps] == [None, None, None]
    assert len(ui.confirms()) == 1
    assert settings.tools.always_allow == ["write_file"]


async def test_agent_read_only_tools_are_never_confirmed(tmp_path: Path) -> None:
    ui = FakeUi(allow=False)
    ws = Workspace(make_workspace(tmp_path))
    llm = ScriptedLLM([tool_call_reply(("read_file", {"path": "notes.txt"})), "done"], tool_call=True)
    agent = ReActAgent(llm, ToolRegistry(file_tools(ws)), confirm=make_confirmer(ui))
    result = await agent.run("read", on_event=ui)
    assert result.steps[0].error is None and ui.confirms() == []


# --- terminal -------------------------------------------------------------------------------
@pytest.mark.parametrize(("typed", "allowed"), [("y\n", True), ("yes\n", True), ("n\n", False),
                                                ("\n", False), ("maybe\ny\n", True), ("", False)])
async def test_terminal_answers(typed: str, allowed: bool) -> None:
    out = io.StringIO()
    confirmer = TerminalConfirmer(stdin=io.StringIO(typed), stdout=out, interactive=True)
    assert await confirmer("write_file", {"path": "a.txt"}) is allowed
    assert "write_file" in out.getvalue() and 'path: "a.txt"' in out.getvalue()


async def test_terminal_always_is_saved() -> None:
    settings = Settings()
    out = io.StringIO()
    confirmer = TerminalConfirmer(settings=settings, stdin=io.StringIO("a\n"), stdout=out,
                                  interactive=True)
    assert await confirmer("run_python", {"code": "print(1)"}) is True
    assert await confirmer("run_python", {"code": "print(2)"}) is True
    assert out.getvalue().count("Allow?") == 1
    assert load_settings().tools.always_allow == ["run_python"]


async def test_terminal_denies_when_stdin_is_not_a_tty() -> None:
    out = io.StringIO()
    confirmer = TerminalConfirmer(stdin=io.StringIO("y\n"), stdout=out)  # StringIO is no TTY
    assert await confirmer("write_file", {}) is False
    assert "stdin is not a terminal" in out.getvalue() and "always_allow" in out.getvalue()
