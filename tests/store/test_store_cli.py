"""``desktop-app conversations ...`` end to end, in process, on the test's own database."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from desktop_app.cli import main
from desktop_app.core.config import secrets
from desktop_app.core.config.settings import EndpointModelConfig, Settings, save_settings
from desktop_app.core.store.conversation_store import ConversationStore

FIXTURE = Path(__file__).parent / "fixtures" / "chatgpt_conversations.json"


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["conversations", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_import_list_search_show(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(capsys, "import", str(FIXTURE))
    assert code == 0 and "3 imported, 0 already there, 0 skipped" in err
    code, out, _ = _run(capsys, "list")
    assert code == 0
    assert [line.split("  ")[-1] for line in out.splitlines()] == [
        "Is 1001 prime?", "Email regex in Python"]  # newest first, archived hidden
    code, out, _ = _run(capsys, "list", "--all", "--json")
    assert len(json.loads(out)) == 3
    code, out, _ = _run(capsys, "search", "plus", "addressing")
    assert code == 0 and "Email regex in Python" in out and "**plus** **addressing**" in out
    assert _run(capsys, "search", "nothing-matches-this")[0] == 1
    code, out, _ = _run(capsys, "show", "6650c2")
    assert out.startswith("# Email regex in Python") and "## Assistant · gpt-4o-mini" in out


def test_export_json_reimports_and_md_goes_to_a_file(capsys: pytest.CaptureFixture[str],
                                                     tmp_path: Path) -> None:
    _run(capsys, "import", str(FIXTURE))
    target = tmp_path / "all.json"
    code, _, err = _run(capsys, "export", "--all", "--format", "json", "-o", str(target))
    assert code == 0 and "exported 3 conversation(s)" in err
    code, _, err = _run(capsys, "import", str(target))
    assert "0 imported, 3 already there" in err
    assert len(json.loads(_run(capsys, "list", "--all", "--json")[1])) == 3
    with ConversationStore() as store:  # into a fresh database it all comes back
        store.conn.execute("DELETE FROM conversations")
    assert "3 imported" in _run(capsys, "import", str(target))[2]
    md = tmp_path / "one.md"
    _run(capsys, "export", "6650d0", "-o", str(md))
    assert "<summary>Tool step 1: <code>python</code></summary>" in md.read_text()


def test_trash_cycle_and_unknown_ids(capsys: pytest.CaptureFixture[str]) -> None:
    _run(capsys, "import", str(FIXTURE))
    code, _, err = _run(capsys, "delete", "6650e1")
    assert code == 0 and "restore 6650e1" in err
    assert "Is 1001 prime?" in _run(capsys, "list", "--trash")[1]
    assert "Is 1001 prime?" not in _run(capsys, "list")[1]
    _run(capsys, "restore", "6650e1")
    assert "Is 1001 prime?" in _run(capsys, "list")[1]
    _run(capsys, "delete", "6650e1")
    assert "permanently deleted 1" in _run(capsys, "purge")[2]
    code, _, err = _run(capsys, "show", "6650e1")
    assert code == 2 and "No conversation id starts with '6650e1'" in err


def test_rename_pin_archive(capsys: pytest.CaptureFixture[str]) -> None:
    _run(capsys, "import", str(FIXTURE))
    assert "Regexes" in _run(capsys, "rename", "6650c2", "Regexes")[1]
    _run(capsys, "pin", "6650c2")
    assert _run(capsys, "list")[1].splitlines()[0].endswith("Regexes 📌")
    _run(capsys, "archive", "6650d0", "--off")
    assert len(_run(capsys, "list")[1].splitlines()) == 3


def test_cli_export_redacts_configured_keys(capsys: pytest.CaptureFixture[str]) -> None:
    key = "sk-cli-redaction-test-1234567890"
    secrets.set_api_key("hosted", key)
    save_settings(Settings(endpoints=[EndpointModelConfig(
        name="hosted", base_url="https://h/v1", model="m", api_key_ref="hosted")]))
    with ConversationStore() as store:
        conv = store.create_conversation("leak?")
        store.add_message(conv.id, "user", f"is {key} valid?")
    for fmt in ("md", "json"):
        out = _run(capsys, "export", conv.id, "--format", fmt)[1]
        assert key not in out and "[REDACTED]" in out


def test_backup_is_a_complete_usable_database(capsys: pytest.CaptureFixture[str],
                                              tmp_path: Path) -> None:
    _run(capsys, "import", str(FIXTURE))
    target = tmp_path / "backup.db"
    code, _, err = _run(capsys, "backup", str(target))
    assert code == 0 and "backed up 3 conversation(s)" in err
    with ConversationStore(target) as copy:
        assert copy.integrity_check() == "ok"
        assert len(copy.list_conversations(archived=None)) == 3
        assert copy.search("plus addressing")
    assert _run(capsys, "backup", str(target))[0] == 2  # never overwrites
