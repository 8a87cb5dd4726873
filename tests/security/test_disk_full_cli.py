"""A full disk under the CLI (a real one: ``small_disk``): an import or a settings change
ends with a message that says what to do, the data saved before is intact, no traceback."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from disk_helpers import fill_disk
from hub_fakes import write_tiny_gguf

from desktop_app.cli import main
from desktop_app.core.config.settings import load_settings, settings_path


def _export(tmp_path: Path, count: int) -> Path:
    chats = [{"conversation_id": f"c{i}", "title": f"chat {i}", "create_time": 1.7e9,
              "update_time": 1.7e9, "current_node": "b", "mapping": {
                  "a": {"id": "a", "parent": None, "children": ["b"], "message": {
                      "author": {"role": "user"}, "create_time": 1.7e9,
                      "content": {"content_type": "text", "parts": ["x" * 4000]}}},
                  "b": {"id": "b", "parent": "a", "children": [], "message": {
                      "author": {"role": "assistant"}, "create_time": 1.7e9,
                      "content": {"content_type": "text", "parts": ["y" * 4000]}}}}}
             for i in range(count)]
    path = tmp_path / "conversations.json"
    path.write_text(json.dumps(chats))
    return path


def test_an_import_onto_a_full_disk_says_so_and_keeps_what_was_there(
        tmp_path: Path, small_disk: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["conversations", "import", str(_export(tmp_path, 2))]) == 0
    capsys.readouterr()
    filler = fill_disk(small_disk)
    code = main(["conversations", "import", str(_export(tmp_path, 400))])
    err = capsys.readouterr().err
    assert code != 0 and "Traceback" not in err
    assert "free space" in err or "disk is full" in err, err
    assert "move it aside" not in err  # it is not damaged
    filler.unlink()
    assert main(["conversations", "list"]) == 0  # space again: all there
    assert "chat 1" in capsys.readouterr().out


def test_a_settings_change_on_a_full_disk_says_so_and_keeps_the_file(
        tmp_path: Path, small_disk: Path, capsys: pytest.CaptureFixture[str]) -> None:
    first = write_tiny_gguf(tmp_path / "first-Q4_K_M.gguf")
    assert main(["models", "add", str(first)]) == 0
    before = settings_path().read_text()
    capsys.readouterr()
    fill_disk(small_disk)
    code = main(["models", "add", str(write_tiny_gguf(tmp_path / "second-Q4_K_M.gguf"))])
    err = capsys.readouterr().err
    assert code != 0 and "Traceback" not in err
    assert "disk is full" in err and "Free some space" in err, err
    assert settings_path().read_text() == before
    assert [m.name for m in load_settings().local_models] == ["first-q4_k_m"]
