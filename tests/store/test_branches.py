"""Edit and regenerate keep the earlier version: forks, switching, nested versions, and
what travels with a version (tool steps, artifacts), on the real SQLite store."""

from __future__ import annotations

import json

import pytest

from desktop_app.core.errors import StorageError
from desktop_app.core.store.conversation_store import ConversationStore


def _texts(store: ConversationStore, conversation_id: str) -> list[str]:
    return [m.content for m in store.list_messages(conversation_id)]


@pytest.fixture
def store(tmp_path):
    with ConversationStore(tmp_path / "db.sqlite") as s:
        yield s


def test_an_edit_keeps_the_old_version_and_switching_swaps_them(store) -> None:
    conv = store.create_conversation(model="m")
    store.add_message(conv.id, "user", "Hi")
    store.add_message(conv.id, "assistant", "Hello!")
    asked = store.add_message(conv.id, "user", "What is 2+2?")
    answer = store.add_message(conv.id, "assistant", "4")
    step = store.add_tool_step(answer.id, 1, "calculator", {"expression": "2+2"},
                               observation="2+2 = 4")
    store.add_artifact(conv.id, "sum.html", "text/html", "<p>4</p>", message_id=answer.id,
                       step_id=step.id)
    fork = store.fork_from(asked.id)  # the user edits "What is 2+2?"
    assert (fork.index, fork.active, fork.total) == (2, 2, 2)
    assert _texts(store, conv.id) == ["Hi", "Hello!"]
    store.add_message(conv.id, "user", "What is 3+3?")
    store.add_message(conv.id, "assistant", "6")
    [shown] = store.forks(conv.id)
    assert (shown.index, shown.active, shown.total) == (2, 2, 2)

    back = store.switch_branch(conv.id, 2, 1)
    assert (back.active, back.total) == (2 - 1, 2)
    assert _texts(store, conv.id) == ["Hi", "Hello!", "What is 2+2?", "4"]
    restored = store.list_messages(conv.id, with_steps=True)[-1]
    assert [s.tool for s in restored.steps] == ["calculator"]
    detail = store.load_conversation(conv.id)
    assert [a.name for a in detail.artifacts] == ["sum.html"]
    assert detail.artifacts[0].message_id == restored.id  # re-linked to the new row
    store.switch_branch(conv.id, 2, 2)
    assert _texts(store, conv.id) == ["Hi", "Hello!", "What is 3+3?", "6"]
    # The search index follows the shown version.
    assert [h.conversation_id for h in store.search("3+3")] == [conv.id]


def test_versions_below_a_fork_travel_with_their_version(store) -> None:
    conv = store.create_conversation()
    first = store.add_message(conv.id, "user", "A")
    store.add_message(conv.id, "assistant", "a1")
    second = store.add_message(conv.id, "user", "B")
    store.add_message(conv.id, "assistant", "b1")
    store.fork_from(second.id)  # regenerate B: version 2 of the fork at 2
    store.add_message(conv.id, "user", "B")
    store.add_message(conv.id, "assistant", "b2")
    store.fork_from(first.id)  # now edit A: the whole tail, with its fork, is version 1
    store.add_message(conv.id, "user", "A'")
    store.add_message(conv.id, "assistant", "a'")
    assert [(f.index, f.active, f.total) for f in store.forks(conv.id)] == [(0, 2, 2)]
    store.switch_branch(conv.id, 0, 1)
    assert _texts(store, conv.id) == ["A", "a1", "B", "b2"]
    assert [(f.index, f.active, f.total) for f in store.forks(conv.id)] == [
        (0, 1, 2), (2, 2, 2)]
    store.switch_branch(conv.id, 2, 1)
    assert _texts(store, conv.id) == ["A", "a1", "B", "b1"]


def test_unknown_versions_are_clear_errors(store) -> None:
    conv = store.create_conversation()
    asked = store.add_message(conv.id, "user", "Q")
    store.fork_from(asked.id)
    with pytest.raises(StorageError, match="no version 5"):
        store.switch_branch(conv.id, 0, 5)
    assert store.stored_branches(conv.id)[0]["messages"][0]["content"] == "Q"


def test_search_and_export_include_the_versions_not_shown(store) -> None:
    from desktop_app.core.store.exporting import export_json

    conv = store.create_conversation()
    asked = store.add_message(conv.id, "user", "Tell me about zebras")
    store.add_message(conv.id, "assistant", "Zebras have stripes.")
    store.fork_from(asked.id)
    store.add_message(conv.id, "user", "Tell me about lions")
    hits = store.search("stripes")
    assert [(h.conversation_id, h.message_id) for h in hits] == [(conv.id, 0)]
    assert hits[0].snippet.startswith("(earlier version)")
    document = json.loads(export_json([store.load_conversation(conv.id)]))
    [exported] = document["conversations"]
    assert [m["content"] for m in exported["messages"]] == ["Tell me about lions"]
    [version] = exported["versions"]
    assert version["fork_index"] == 0 and version["version"] == 1
    assert [m["content"] for m in version["messages"]] == ["Tell me about zebras",
                                                          "Zebras have stripes."]
