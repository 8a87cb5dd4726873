"""A damaged conversation database, or an unexpected error, gives the person one line
they can act on and a report file (keys removed), never a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from desktop_app.cli import main
from desktop_app.core.store.conversation_store import ConversationStore


def _damage(db: Path) -> None:
    store = ConversationStore(db)
    conv = store.create_conversation("secret plans")
    for n in range(300):
        store.add_message(conv.id, "user", f"message {n} " + "x" * 400)
    store.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    store.close()
    data = bytearray(db.read_bytes())
    page = 4096
    # Garble the headers of pages in the second half (the messages' pages): the file
    # opens, and queries that touch those pages fail.
    for start in range(len(data) // page // 2 * page, len(data) - page, 2 * page):
        data[start:start + 16] = b"\xff" * 16
    db.write_bytes(bytes(data))


@pytest.mark.parametrize("command", [["list"], ["search", "message"],
                                     ["export", "--all", "--format", "json"]])
def test_a_damaged_database_is_a_message_not_a_traceback(
        app_home: Path, capsys: pytest.CaptureFixture[str], command: list[str]) -> None:
    _damage(app_home / "data" / "conversations.db")
    code = main(["conversations", *command])
    err = capsys.readouterr().err
    assert code != 0
    assert "Traceback" not in err
    assert "move conversations.db aside" in err and "Details for a bug report" in err


def test_an_unexpected_error_leaves_a_scrubbed_report(
        app_home: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("desktop_app.core.log_setup.configured_secrets",
                        lambda: ["sk-live-TOPSECRET"])

    def boom(_args: object) -> int:
        raise RuntimeError("server said: bad key sk-live-TOPSECRET")

    monkeypatch.setattr("desktop_app.cli.conversations._list", boom, raising=False)
    from desktop_app.cli import conversations

    parser_func = getattr(conversations, "_list", None)
    assert parser_func is boom
    code = main(["conversations", "list"])
    err = capsys.readouterr().err
    assert code == 1 and "Traceback" not in err
    assert "unexpected RuntimeError" in err and "sk-live-TOPSECRET" not in err
    report = Path(err.split("Details for a bug report: ")[1].strip())
    text = report.read_text()
    assert "Traceback" in text and "sk-live-TOPSECRET" not in text
