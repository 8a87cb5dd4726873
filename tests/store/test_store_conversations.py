"""Conversations and messages in a real SQLite file: lifecycle, ordering, history."""

from __future__ import annotations

import time

import pytest

from desktop_app.core.errors import StorageError
from desktop_app.core.llm.types import ChatMessage, ToolCall
from desktop_app.core.store.conversation_store import ConversationNotFoundError, ConversationStore


def test_first_user_message_titles_an_untitled_conversation(store: ConversationStore) -> None:
    conv = store.create_conversation(model="qwen", mode="dag")
    store.add_message(conv.id, "user", "\n  Plan a trip to Lisbon in May with a small budget "
                                       "and lots of museums please\nsecond line")
    got = store.get_conversation(conv.id)
    assert got.title.startswith("Plan a trip to Lisbon") and got.title.endswith("…")
    assert len(got.title) <= 60 and (got.model, got.mode) == ("qwen", "dag")
    store.add_message(conv.id, "user", "another question")
    assert store.get_conversation(conv.id).title == got.title  # only the first one names it


def test_list_is_pinned_first_then_most_recently_updated(store: ConversationStore) -> None:
    a = store.create_conversation("a", created_at=100)
    b = store.create_conversation("b", created_at=200)
    store.create_conversation("c", created_at=300)
    store.add_message(a.id, "user", "bump a")  # a is now the most recent
    store.set_pinned(b.id)
    assert [x.title for x in store.list_conversations()] == ["b", "a", "c"]
    assert store.list_conversations(limit=1, offset=1)[0].title == "a"
    assert [x.message_count for x in store.list_conversations()] == [0, 1, 0]


def test_archive_hides_from_the_default_list(store: ConversationStore) -> None:
    a = store.create_conversation("a")
    store.create_conversation("b")
    store.set_archived(a.id)
    assert [x.title for x in store.list_conversations()] == ["b"]
    assert [x.title for x in store.list_conversations(archived=True)] == ["a"]
    assert len(store.list_conversations(archived=None)) == 2


def test_delete_is_undoable_until_purged(store: ConversationStore) -> None:
    conv = store.create_conversation("keep me")
    msg = store.add_message(conv.id, "user", "hello")
    store.add_tool_step(store.add_message(conv.id, "assistant", "x").id, 1, "clock")
    store.delete_conversation(conv.id)
    assert store.list_conversations() == []
    assert [c.id for c in store.list_conversations(deleted=True)] == [conv.id]
    store.restore_conversation(conv.id)
    assert [c.id for c in store.list_conversations()] == [conv.id]

    store.delete_conversation(conv.id)
    assert store.purge_deleted(older_than=3600) == 0  # trashed just now: kept
    assert store.purge_deleted() == 1
    with pytest.raises(ConversationNotFoundError):
        store.get_conversation(conv.id)
    with pytest.raises(ConversationNotFoundError):
        store.get_message(msg.id)
    # Foreign keys cascaded: nothing is left behind.
    for table in ("messages", "tool_steps", "messages_fts"):
        assert store.conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0] == 0


def test_rename_and_unknown_ids_give_clear_errors(store: ConversationStore) -> None:
    conv = store.create_conversation("old")
    assert store.rename_conversation(conv.id, "  new name ").title == "new name"
    with pytest.raises(ConversationNotFoundError, match="No conversation"):
        store.rename_conversation("nope", "x")
    with pytest.raises(ConversationNotFoundError, match="No conversation"):
        store.add_message("nope", "user", "hi")
    with pytest.raises(StorageError, match="rejected"):
        store.add_message(conv.id, "wizard", "hi")
    with pytest.raises(StorageError, match="mode"):
        store.set_mode(conv.id, "swarm")


def test_resolve_id_accepts_a_unique_prefix(store: ConversationStore) -> None:
    a = store.create_conversation(id="abc123")
    store.create_conversation(id="abd999")
    assert store.resolve_id("abc") == a.id
    with pytest.raises(StorageError, match="Several"):
        store.resolve_id("ab")
    with pytest.raises(ConversationNotFoundError):
        store.resolve_id("zzz")


def test_message_fields_round_trip(store: ConversationStore) -> None:
    conv = store.create_conversation()
    msg = store.add_message(conv.id, "assistant", "answer", reasoning="because", model="m1",
                            prompt_tokens=10, completion_tokens=20, ttft=0.5, elapsed=2.0,
                            tokens_per_second=13.3, status="complete")
    got = store.get_message(msg.id)
    assert (got.reasoning, got.model, got.prompt_tokens, got.completion_tokens) == \
        ("because", "m1", 10, 20)
    assert (got.timings.ttft, got.timings.elapsed, got.timings.tokens_per_second) == \
        (0.5, 2.0, 13.3)


def test_delete_messages_from_supports_regenerate(store: ConversationStore) -> None:
    conv = store.create_conversation()
    store.add_message(conv.id, "user", "q1")
    answer = store.add_message(conv.id, "assistant", "a1")
    store.add_message(conv.id, "user", "q2")
    assert store.delete_messages_from(answer.id) == 2
    assert [m.content for m in store.list_messages(conv.id)] == ["q1"]
    assert store.get_conversation(conv.id).title == "q1"  # its first question stays


def test_editing_the_first_question_renames_an_auto_titled_chat(store: ConversationStore) -> None:
    conv = store.create_conversation()
    first = store.add_message(conv.id, "user", "Compute 12*12")
    store.add_message(conv.id, "assistant", "144")
    store.delete_messages_from(first.id)  # edit and resend
    store.add_message(conv.id, "user", "Compute 13*13")
    assert store.get_conversation(conv.id).title == "Compute 13*13"
    # A title the user gave is theirs: it survives the edit.
    store.rename_conversation(conv.id, "Squares")
    second = store.list_messages(conv.id)[0]
    store.delete_messages_from(second.id)
    store.add_message(conv.id, "user", "Compute 14*14")
    assert store.get_conversation(conv.id).title == "Squares"


def test_tool_steps_and_artifacts_belong_to_their_message(store: ConversationStore) -> None:
    conv = store.create_conversation()
    answer = store.add_message(conv.id, "assistant", "done")
    step = store.add_tool_step(answer.id, 1, "report", {"title": "T"}, observation="ok",
                               elapsed=0.25)
    store.add_tool_step(answer.id, 2, "broken", '{"not json', error="bad arguments")
    store.add_artifact(conv.id, "report.html", "text/html", "<h1>T</h1>",
                       message_id=answer.id, step_id=step.id)
    detail = store.load_conversation(conv.id)
    steps = detail.messages[0].steps
    assert [(s.tool, s.args, s.error) for s in steps] == [
        ("report", {"title": "T"}, None), ("broken", '{"not json', "bad arguments")]
    assert [(a.name, a.step_id) for a in detail.artifacts] == [("report.html", step.id)]
    with pytest.raises(StorageError, match="Store the assistant message first"):
        store.add_tool_step(9999, 1, "x")


def test_interrupts_are_pinned_user_messages_in_order(store: ConversationStore) -> None:
    conv = store.create_conversation()
    query = store.add_message(conv.id, "user", "research X")
    interrupt = store.add_interrupt(conv.id, "also look at Y", run_message_id=query.id)
    store.add_message(conv.id, "assistant", "X and Y")
    assert [i.id for i in store.pending_interrupts(conv.id)] == [interrupt.id]
    store.mark_interrupts_delivered([interrupt.id])
    assert store.pending_interrupts(conv.id) == []
    history = store.load_history(conv.id)
    assert [(m.role, m.content, m.pinned) for m in history] == [
        ("user", "research X", False), ("user", "also look at Y", True),
        ("assistant", "X and Y", False)]


def test_load_history_repairs_what_a_provider_would_reject(store: ConversationStore) -> None:
    conv = store.create_conversation()
    store.add_chat_message(conv.id, ChatMessage.system("be brief"))
    store.add_chat_message(conv.id, ChatMessage.user("what time is it?"))
    call = ToolCall(id="c1", name="clock", arguments="{}")
    store.add_chat_message(conv.id, ChatMessage.assistant(tool_calls=[call]))
    store.add_chat_message(conv.id, ChatMessage.tool("12:00", tool_call_id="c1", name="clock"))
    store.add_chat_message(conv.id, ChatMessage.assistant("It is noon.",
                                                          reasoning_content="read clock"))
    # A crash while a tool ran: tool_calls without results, then an empty interrupted answer.
    store.add_chat_message(conv.id, ChatMessage.assistant(
        "let me check", tool_calls=[ToolCall(id="c2", name="clock")]))
    store.add_message(conv.id, "tool", "orphan", tool_call_id="zzz")
    store.add_message(conv.id, "assistant", "", status="interrupted")
    store.add_message(conv.id, "assistant", "", status="error", error="timeout")

    history = store.load_history(conv.id)
    assert [m.role for m in history] == ["system", "user", "assistant", "tool", "assistant",
                                         "assistant"]
    assert history[2].tool_calls == [call]
    assert history[3].tool_call_id == "c1"
    assert history[4].reasoning_content == "read clock"
    assert (history[5].content, history[5].tool_calls) == ("let me check", [])
    # The repaired history is acceptable in provider wire form.
    assert all(isinstance(m.to_provider(), dict) for m in history)


def test_load_history_of_unknown_conversation_raises(store: ConversationStore) -> None:
    with pytest.raises(ConversationNotFoundError):
        store.load_history("missing")


def test_updated_at_moves_forward_when_a_message_arrives(store: ConversationStore) -> None:
    conv = store.create_conversation(created_at=time.time() - 100)
    store.add_message(conv.id, "user", "hi")
    assert store.get_conversation(conv.id).updated_at > conv.updated_at


def test_messages_page_back_from_the_newest(store: ConversationStore) -> None:
    conv = store.create_conversation()
    ids = [store.add_message(conv.id, "user", f"m{i}").id for i in range(10)]
    answer = store.get_message(ids[8])
    store.add_tool_step(answer.id, 1, "t")
    store.add_tool_step(ids[1], 1, "old")
    page = store.load_conversation(conv.id, last=3).messages
    assert [m.content for m in page] == ["m7", "m8", "m9"]
    assert [s.tool for s in page[1].steps] == ["t"]
    older = store.list_messages(conv.id, limit=3, before_id=page[0].id, with_steps=True)
    assert [m.content for m in older] == ["m4", "m5", "m6"]
    assert [m.content for m in store.list_messages(conv.id, before_id=ids[2])] == ["m0", "m1"]
