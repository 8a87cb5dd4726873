"""The window's main journeys under an audit hook that sees every name lookup and
connection of the app's process (issue 25): start, a chat with a "hosted" model, a hub
search in the Models window, Compare. The model and the hub are real servers on this
computer's LAN address (to the app, another computer). Lock on: nothing off the computer;
lock off: every connection off the computer has its requests in the ledger."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from ui_helpers import make_window, wait_for

sys.path.insert(0, str(Path(__file__).parents[1] / "llm"))
sys.path.insert(0, str(Path(__file__).parents[1]))
from fake_openai_server import Reply, chunk, lan_server, this_computers_lan_address  # noqa: F401
from network_audit import lan_hub, network, off_computer  # noqa: F401

from desktop_app.core import egress
from desktop_app.core.llm.openai_adapter import OpenAICompatibleLLM

pytestmark = pytest.mark.gui

async def _journeys(qtbot, server, offline: bool) -> Any:
    from desktop_app.core.llm.testing import ScriptedLLM

    llm = OpenAICompatibleLLM(base_url=server.base_url, model="hosted")
    server.add(Reply(sse=[chunk("Hello there."), chunk(finish_reason="stop")]),
               Reply(sse=[chunk("Hello again."), chunk(finish_reason="stop")]),
               Reply(sse=[chunk("Hello again."), chunk(finish_reason="stop")]))
    window = await make_window(qtbot, llm, ScriptedLLM(["Hi from here."] * 4,
                                                       model_id="local"))
    if offline:
        window.offline_switch.click()
    window.picker.select("hosted")
    await window.send("Hello!")
    await window.controller.wait_idle()
    window.open_models()
    search = window.models_window.search
    window.models_window.tabs.setCurrentWidget(search)
    search.query.setText("tiny")
    qtbot.mouseClick(search.search_button, Qt.MouseButton.LeftButton)
    if offline:
        await wait_for(lambda: "offline lock" in search.status.text().lower())
    else:
        await wait_for(lambda: search.repos.count() == 1)
    window.open_compare()
    compare = window.compare_window
    compare.prompt.setPlainText("Hello?")
    compare.set_checked(["hosted", "local"])
    compare.run_button.click()
    await compare.wait_idle()
    return window


def test_window_journeys_with_the_lock_on_stay_on_the_computer(
        qtbot, loop, lan_server, lan_hub, network) -> None:  # noqa: F811
    loop.run_until_complete(_journeys(qtbot, lan_server, offline=True))
    off = [(e, h) for e, h in network if not egress.is_local_host(h)]
    assert off == []
    assert lan_server.requests == [] and lan_hub.requests == []
    assert egress.ledger().entries() == []


def test_window_journeys_with_the_lock_off_are_all_in_the_ledger(
        qtbot, loop, lan_server, lan_hub, network) -> None:  # noqa: F811
    loop.run_until_complete(_journeys(qtbot, lan_server, offline=False))
    connected = {h for e, h in network if e == "socket.connect" and not egress.is_local_host(h)}
    rows = egress.ledger().entries()
    assert connected == {lan_server.host} == {row.host for row in rows}
    model_rows = [row for row in rows if row.purpose == "chat completion"]
    assert [row.bytes_sent for row in model_rows] == lan_server.bytes_in
    assert len(rows) - len(model_rows) == len(lan_hub.requests) >= 1
