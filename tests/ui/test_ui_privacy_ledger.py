"""The privacy ledger in the window (issue 25): an answer whose requests went to a server
says where and how much, also after the chat is reopened; a click shows exactly what was
sent; the ledger window lists, filters, exports and clears."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from ui_helpers import make_window, wait_for

sys.path.insert(0, str(Path(__file__).parents[1] / "llm"))
from fake_openai_server import Reply, chunk, fake_server  # noqa: F401

from desktop_app.core import egress
from desktop_app.core.egress import EgressRecord
from desktop_app.core.llm.openai_adapter import OpenAICompatibleLLM
from desktop_app.ui.privacy_ledger import LedgerWindow, sent_summary

pytestmark = pytest.mark.gui


def _record(host: str, sent: int, local: bool = False) -> EgressRecord:
    return EgressRecord(host=host, url=f"https://{host}/v1/chat/completions", method="POST",
                        purpose="chat completion", bytes_sent=sent, bytes_received=10,
                        content="{}", local=local)


def test_the_line_names_the_hosts_that_left_the_computer_first() -> None:
    assert sent_summary([_record("api.example.com", 1200), _record("api.example.com", 2000)]
                        ) == "Sent to api.example.com · 3.2 kB"
    assert sent_summary([_record("127.0.0.1", 512, local=True)]) == (
        "Stayed on this computer (127.0.0.1) · 512 B")
    assert sent_summary([_record("127.0.0.1", 512, local=True), _record("api.x.org", 90)]
                        ) == "Sent to api.x.org · 90 B"


def test_an_answer_shows_what_it_sent_and_the_ledger_shows_the_payload(
        qtbot, loop, fake_server, tmp_path: Path) -> None:  # noqa: F811
    fake_server.add(Reply(sse=[chunk("Bonjour."), chunk(finish_reason="stop")]))
    llm = OpenAICompatibleLLM(base_url=fake_server.base_url, model="hosted-test")

    async def scenario():
        window = await make_window(qtbot, llm)
        window.picker.select("hosted-test")
        await window.send("Say hello in French, please")
        await window.controller.wait_idle()
        turn = window.chat.items()[-1]
        await wait_for(lambda: turn.sent.isVisible())
        line = turn.sent.text()
        # Reopened from the store, the answer still says it.
        conversation = window.conversation_id
        window.new_conversation()
        await window.open_conversation(conversation)
        again = window.chat.items()[-1]
        await wait_for(lambda: again.sent.isVisible())
        opened = window.ledger_button.open(str(again.message_id))
        await wait_for(lambda: opened.table.rowCount() == 1)
        await wait_for(lambda: "Say hello" in opened.table.item(0, 5).text())  # the chat's title
        opened.table.selectRow(0)
        payload = opened.content.toPlainText()
        export = tmp_path / "ledger.json"
        await opened.export_to(export)
        opened.filter.setText("no such host")
        filtered = opened.table.rowCount()
        await opened.clear()
        return line, again.sent.text(), payload, json.loads(export.read_text()), filtered, \
            opened.table.rowCount()

    line, reopened, payload, exported, filtered, after_clear = loop.run_until_complete(scenario())
    size = fake_server.bytes_in[0]
    assert line.startswith(f"Stayed on this computer (127.0.0.1) · {egress.human_bytes(size)}")
    assert "see what was sent" in line and reopened == line
    assert "Say hello in French, please" in payload and "POST http://127.0.0.1" in payload
    assert [row["bytes_sent"] for row in exported] == [size]
    assert filtered == 0 and after_clear == 0


def test_the_status_bar_opens_the_whole_ledger(qtbot, loop) -> None:
    egress.ledger().record(_record("api.example.com", 2500))

    async def scenario():
        window = await make_window(qtbot)
        assert window.ledger_button.isVisible()
        window.ledger_button.click()
        [opened] = [w for w in window.findChildren(LedgerWindow) if w.isVisible()]
        await wait_for(lambda: opened.table.rowCount() == 1)
        return opened.summary.text(), opened.table.item(0, 1).text()

    summary, where = loop.run_until_complete(scenario())
    assert summary.startswith("1 request in the ledger left this computer (2.5 kB sent)")
    assert where == "api.example.com"
