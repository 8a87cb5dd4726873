"""Export to Markdown/JSON and import back; ChatGPT import; exports never hold API keys."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path
from typing import Any

import pytest

from desktop_app.core.errors import StorageError
from desktop_app.core.store.conversation_store import ConversationStore
from desktop_app.core.store.exporting import export_json, export_markdown
from desktop_app.core.store.importing import import_data, import_file

FIXTURES = Path(__file__).parent / "fixtures"


def _rich_conversation(store: ConversationStore) -> str:
    conv = store.create_conversation("Weather report", model="qwen", mode="dag", created_at=1e9)
    user = store.add_message(conv.id, "user", "Make me a report about Rome's weather.",
                             created_at=1e9 + 1)
    store.add_interrupt(conv.id, "in Celsius please", run_message_id=user.id,
                        created_at=1e9 + 2)
    answer = store.add_message(
        conv.id, "assistant", "Here is the report. ```` nested fences ```` survive.",
        reasoning="need the forecast tool", model="qwen", prompt_tokens=120,
        completion_tokens=40, ttft=0.8, elapsed=3.5, tokens_per_second=11.4, created_at=1e9 + 3)
    step = store.add_tool_step(answer.id, 1, "forecast", {"city": "Rome", "unit": "C"},
                               observation="```\n21 °C, sunny\n```", elapsed=0.42,
                               created_at=1e9 + 2.5)
    store.add_tool_step(answer.id, 2, "chart<x>", "not json", error="bad args",
                        created_at=1e9 + 2.6)
    store.add_artifact(conv.id, "report.html", "text/html", "<h1>Rome</h1>",
                       message_id=answer.id, step_id=step.id, created_at=1e9 + 2.7)
    store.add_artifact(conv.id, "notes.md", "text/markdown", "# notes", message_id=answer.id,
                       created_at=1e9 + 2.8)
    store.add_message(conv.id, "assistant", "partial", status="interrupted", created_at=1e9 + 4)
    store.set_pinned(conv.id)
    return conv.id


def _comparable(document: dict[str, Any]) -> list[dict[str, Any]]:
    convs = document["conversations"]
    for c in convs:
        c.pop("id")
    return convs


def test_json_round_trip_is_lossless(store: ConversationStore, tmp_path: Path) -> None:
    conv_id = _rich_conversation(store)
    first = export_json([store.load_conversation(conv_id)])
    doc = json.loads(first)
    assert (doc["format"], doc["version"]) == ("desktop-app/conversations", 1)

    other = ConversationStore(tmp_path / "other.db")
    try:
        report = import_data(other, json.loads(first))
        assert report.skipped == [] and len(report.imported) == 1
        assert report.imported[0].id == conv_id  # the id is kept when it is free
        second = export_json([other.load_conversation(conv_id)])
        assert _comparable(json.loads(second)) == _comparable(doc)
        history = other.load_history(conv_id)
        assert [(m.role, m.pinned) for m in history] == [
            ("user", False), ("user", True), ("assistant", False), ("assistant", False)]
        assert other.list_interrupts(conv_id)[0].run_message_id == \
            other.list_messages(conv_id)[0].id
    finally:
        other.close()


def test_reimport_skips_unchanged_and_copies_changed(store: ConversationStore) -> None:
    conv_id = _rich_conversation(store)
    exported = json.loads(export_json([store.load_conversation(conv_id)]))
    report = import_data(store, exported)
    assert report.imported == [] and len(report.unchanged) == 1
    exported["conversations"][0]["messages"].append({"role": "user", "content": "more"})
    report = import_data(store, exported)
    copy = report.imported[0]
    assert copy.id != conv_id and copy.title == "Weather report"
    assert copy.message_count == store.get_conversation(conv_id).message_count + 1


def test_markdown_is_readable_with_collapsible_tool_steps(store: ConversationStore) -> None:
    md = export_markdown(store.load_conversation(_rich_conversation(store)))
    assert md.startswith("# Weather report\n")
    assert "## User" in md and "## Assistant · qwen" in md
    assert "## User (sent while the assistant was working)" in md
    # Two tool steps, the reasoning and the message-level artifact (the step artifact is
    # inside its step).
    assert md.count("<details>") == md.count("</details>") == 4
    assert "**Artifact** `report.html` (text/html)" in md
    assert "<summary>Tool step 1: <code>forecast</code> (0.42 s)</summary>" in md
    assert "<code>chart&lt;x&gt;</code>" in md  # tool names are escaped in HTML
    assert '"city": "Rome"' in md
    # A fence inside content never closes the export's fence early.
    assert "````text\n```\n21 °C, sunny\n```\n````" in md
    assert "interrupted" in md and "120 prompt / 40 completion tokens" in md


def test_import_rejects_unknown_files_clearly(store: ConversationStore, tmp_path: Path) -> None:
    bad = tmp_path / "x.json"
    bad.write_text('{"hello": 1}')
    with pytest.raises(StorageError, match="neither a desktop-app export nor a ChatGPT"):
        import_file(store, bad)
    bad.write_text("{not json")
    with pytest.raises(StorageError, match="Cannot read"):
        import_file(store, bad)
    with pytest.raises(StorageError, match="format version 99"):
        import_data(store, {"format": "desktop-app/conversations", "version": 99})


def test_one_damaged_conversation_is_skipped_not_half_imported(store: ConversationStore) -> None:
    doc = {"format": "desktop-app/conversations", "version": 1, "conversations": [
        {"title": "good", "messages": [{"role": "user", "content": "hi"}]},
        {"title": "bad", "messages": [{"role": "user", "content": "x"},
                                      {"role": "robot", "content": "y"}]},
    ]}
    report = import_data(store, doc)
    assert [c.title for c in report.imported] == ["good"]
    assert len(report.skipped) == 1 and "conversation 2" in report.skipped[0]
    assert [c.title for c in store.list_conversations()] == ["good"]  # no half of "bad"


# --- ChatGPT -----------------------------------------------------------------------------------

def test_chatgpt_export_follows_the_current_branch(store: ConversationStore) -> None:
    report = import_file(store, FIXTURES / "chatgpt_conversations.json")
    assert report.skipped == []
    assert [c.title for c in report.imported] == [
        "Email regex in Python", "Average of column B", "Is 1001 prime?"]
    regex = report.imported[0]
    assert regex.id == "6650c2a1-7d3e-8000-a1b2-0c9d8e7f6a51"
    assert (regex.model, regex.created_at, regex.updated_at) == \
        ("gpt-4o", 1717401600.123456, 1717402500.654321)
    messages = store.list_messages(regex.id)
    assert [m.role for m in messages] == ["user", "assistant", "user", "assistant"]
    text = "\n".join(m.content for m in messages)
    assert "REGENERATED-AWAY" not in text and "EDITED-AWAY" not in text  # other branches
    assert 'EMAIL = re.compile(r"^[\\w.+-]+@' in messages[1].content  # backslashes intact
    assert messages[3].model == "gpt-4o-mini" and messages[3].created_at == 1717402410.0


def test_chatgpt_tool_use_images_and_reasoning(store: ConversationStore) -> None:
    imported = import_file(store, FIXTURES / "chatgpt_conversations.json").imported
    sheet = store.load_conversation(imported[1].id)
    assert sheet.conversation.archived
    user, answer = sheet.messages  # custom instructions are not a message
    assert user.content.startswith("[image]\nHere is a screenshot")
    assert answer.content == "The average of column B is **42.5**."
    [step] = answer.steps
    assert (step.tool, step.observation) == ("python", "42.5")
    assert step.args == {"code": "values = [40, 45, 42, 43]\nsum(values) / len(values)"}

    prime = store.list_messages(imported[2].id)
    assert [m.role for m in prime] == ["user", "assistant"]
    assert prime[1].reasoning and "143 = 11 × 13" in prime[1].reasoning
    assert store.search("average column")[0].conversation_id == imported[1].id


def test_chatgpt_without_current_node_follows_newest_children(store: ConversationStore) -> None:
    data = json.loads((FIXTURES / "chatgpt_conversations.json").read_text())[0]
    del data["current_node"]
    del data["id"], data["conversation_id"]
    conv = import_data(store, data).imported[0]
    contents = [m.content for m in store.list_messages(conv.id)]
    assert contents[-1].startswith("Yes: `+`")  # last child of each node = newest branch


def test_chatgpt_reimport_adds_nothing_twice(store: ConversationStore) -> None:
    assert len(import_file(store, FIXTURES / "chatgpt_conversations.json").imported) == 3
    again = import_file(store, FIXTURES / "chatgpt_conversations.json")
    assert again.imported == [] and len(again.unchanged) == 3
    assert len(store.list_conversations(archived=None)) == 3


def test_chatgpt_zip_export_is_read(store: ConversationStore, tmp_path: Path) -> None:
    archive = tmp_path / "chatgpt-export.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.write(FIXTURES / "chatgpt_conversations.json", "conversations.json")
        z.writestr("chat.html", "<html></html>")
    assert len(import_file(store, archive).imported) == 3


def test_chatgpt_cyclic_tree_does_not_hang(store: ConversationStore) -> None:
    node = {"id": "a", "parent": "b", "children": ["b"], "message": {
        "author": {"role": "user"}, "content": {"content_type": "text", "parts": ["loop"]}}}
    other = {"id": "b", "parent": "a", "children": ["a"], "message": None}
    conv = import_data(store, [{"title": "cyc", "mapping": {"a": node, "b": other},
                                "current_node": "a"}]).imported[0]
    assert [m.content for m in store.list_messages(conv.id)] == ["loop"]
