"""A hostile export (ChatGPT format) cannot poison the database or stop an import: bad
timestamps are not stored, a bad entry is skipped with a reason, and two imports of one
export at once store each conversation once."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from desktop_app.cli import main
from desktop_app.core.store.conversation_store import ConversationStore
from desktop_app.core.store.importing import import_data, import_file


def _chat(conv_id: str, title: str, create_time: object = 1_700_000_000.0,
          text: object = "hello") -> dict[str, object]:
    return {"conversation_id": conv_id, "title": title, "create_time": create_time,
            "update_time": create_time, "current_node": "b", "mapping": {
                "a": {"id": "a", "parent": None, "children": ["b"], "message": {
                    "author": {"role": "user"}, "create_time": create_time,
                    "content": {"content_type": "text", "parts": [text]}}},
                "b": {"id": "b", "parent": "a", "children": [], "message": {
                    "author": {"role": "assistant"}, "create_time": create_time,
                    "content": {"content_type": "text", "parts": ["hi"]}}}}}


@pytest.mark.parametrize("bad_time", ["yesterday", {"when": 1}, 10**30, -5, True, [1, 2]])
def test_a_bad_timestamp_is_not_stored_and_listing_still_works(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], bad_time: object,
        app_home: Path) -> None:
    export = tmp_path / "conversations.json"
    export.write_text(json.dumps([_chat("c1", "poisoned", bad_time), _chat("c2", "fine")]))
    assert main(["conversations", "import", str(export)]) == 0
    assert "2 imported" in capsys.readouterr().err
    for command in (["list"], ["show", "c1"]):
        assert main(["conversations", *command]) == 0
    out = capsys.readouterr().out
    assert "poisoned" in out or "hello" in out


def test_an_older_poisoned_database_still_lists(app_home: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    store = ConversationStore(app_home / "data" / "conversations.db")
    conv = store.create_conversation("old import")
    store.add_message(conv.id, "user", "hi")
    store.conn.execute("UPDATE conversations SET created_at = 'yesterday', updated_at = 1e30")
    store.conn.execute("UPDATE messages SET created_at = 'yesterday'")
    store.close()
    assert main(["conversations", "list"]) == 0
    assert main(["conversations", "show", conv.id]) == 0
    assert "old import" in capsys.readouterr().out


def test_a_deep_or_wrongly_typed_entry_is_skipped_and_the_rest_imported(
        tmp_path: Path, app_home: Path) -> None:
    deep: object = "x"
    for _ in range(5000):
        deep = {"nested": deep}
    store = ConversationStore(app_home / "data" / "conversations.db")
    report = import_data(store, [_chat("d1", "deep", text=deep),
                                 _chat("d2", "dict content", text={"a": 1}),
                                 _chat("ok", "fine")])
    assert [c.title for c in report.imported][-1] == "fine"
    assert {c.id for c in store.list_conversations()} >= {"ok"}
    store.close()


def test_a_file_nested_deeper_than_json_allows_is_a_clear_error(tmp_path: Path,
                                                                app_home: Path) -> None:
    from desktop_app.core.errors import StorageError

    export = tmp_path / "deep.json"
    export.write_text("[" * 100_000 + "]" * 100_000)
    store = ConversationStore(app_home / "data" / "conversations.db")
    with pytest.raises(StorageError, match="nested deeper"):
        import_file(store, export)
    store.close()


def test_two_imports_of_one_export_at_once_store_each_conversation_once(
        tmp_path: Path, app_home: Path) -> None:
    """Two processes, as two windows or a window and the CLI would be."""
    export = tmp_path / "conversations.json"
    export.write_text(json.dumps([_chat(f"c{i}", f"chat {i}") for i in range(1500)]))
    db = app_home / "data" / "conversations.db"
    ConversationStore(db).close()
    script = "import sys; from desktop_app.cli import main; raise SystemExit(main(sys.argv[1:]))"
    command = [sys.executable, "-c", script, "conversations", "import", str(export)]
    runs = [subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            for _ in range(2)]
    for run in runs:
        _out, err = run.communicate(timeout=300)
        assert run.returncode == 0, err.decode()
    store = ConversationStore(db)
    assert len(store.list_conversations(archived=None)) == 1500
    store.close()
