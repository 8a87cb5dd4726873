"""FTS5 search: ranking, snippets, hostile input, index kept in sync, trash excluded."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from desktop_app.core.store.conversation_store import ConversationStore
from desktop_app.core.store.search import build_match_query


@pytest.fixture
def filled(store: ConversationStore) -> ConversationStore:
    a = store.create_conversation("Cooking")
    store.add_message(a.id, "user", "How long do I boil an egg?")
    store.add_message(a.id, "assistant", "Boil the egg for seven minutes. An egg boiled "
                                         "longer gets a green ring; egg egg egg.")
    b = store.create_conversation("Birds")
    store.add_message(b.id, "user", "Which birds lay a blue egg?")
    c = store.create_conversation("Code")
    store.add_message(c.id, "user", 'My C++ code prints "hello": AND OR NOT (ok)')
    return store


def test_results_are_ranked_by_relevance(filled: ConversationStore) -> None:
    hits = filled.search("egg")
    assert len(hits) == 3
    assert hits[0].conversation_title == "Cooking" and "egg egg egg" in \
        filled.get_message(hits[0].message_id).content
    assert [h.rank for h in hits] == sorted(h.rank for h in hits)  # bm25: lower is better


def test_all_terms_must_match_and_snippets_highlight_them(filled: ConversationStore) -> None:
    hits = filled.search("blue egg")
    assert [h.conversation_title for h in hits] == ["Birds"]
    assert hits[0].snippet == "Which birds lay a **blue** **egg**?"
    assert filled.search("blue egg", highlight=("<b>", "</b>"))[0].snippet.count("<b>") == 2


def test_snippets_of_long_messages_are_cut_around_the_match(store: ConversationStore) -> None:
    conv = store.create_conversation()
    store.add_message(conv.id, "assistant", " ".join(["filler"] * 200 + ["needle"] +
                                                     ["filler"] * 200))
    snippet = store.search("needle")[0].snippet
    assert "**needle**" in snippet and snippet.startswith("…") and len(snippet) < 200


@pytest.mark.parametrize("query", ['C++', '"hello', 'AND', 'OR NOT (', 'prints:', "NEAR(a b)",
                                   'col:umn', "*", "^", '""', "'", "hello)"])
def test_fts_syntax_in_user_input_never_raises(filled: ConversationStore, query: str) -> None:
    filled.search(query)  # must not raise sqlite3.OperationalError / StorageError


def test_operator_words_and_punctuation_are_searched_literally(filled: ConversationStore) -> None:
    assert [h.conversation_title for h in filled.search("AND OR NOT")] == ["Code"]
    assert [h.conversation_title for h in filled.search('"hello":')] == ["Code"]
    assert filled.search("   ") == [] and filled.search("!!! ???") == []


def test_last_term_matches_as_a_prefix_while_typing(filled: ConversationStore) -> None:
    assert [h.conversation_title for h in filled.search("bir")] == ["Birds"]
    assert filled.search("bir blue") == []  # only the last term is a prefix


def test_index_follows_updates_and_deletes(store: ConversationStore) -> None:
    conv = store.create_conversation()
    msg = store.add_message(conv.id, "assistant", "", status="streaming")
    store.update_message(msg.id, content="the answer mentions zanzibar")
    assert [h.message_id for h in store.search("zanzibar")] == [msg.id]
    store.update_message(msg.id, content="rewritten")
    assert store.search("zanzibar") == []
    store.delete_messages_from(msg.id)
    assert store.search("rewritten") == []
    assert store.integrity_check() == "ok"  # includes FTS5's check against the messages


def test_a_drifted_search_index_is_detected_and_rebuilt(store: ConversationStore) -> None:
    conv = store.create_conversation()
    msg = store.add_message(conv.id, "user", "ghost words")
    store.conn.execute("DROP TRIGGER messages_fts_delete")  # simulate a damaged index
    store.conn.execute("DELETE FROM messages WHERE id = ?", (msg.id,))
    assert "search index" in store.integrity_check()
    store.rebuild_search_index()
    assert store.integrity_check() == "ok"
    assert store.search("ghost") == []


def test_trashed_and_optionally_archived_conversations_are_excluded(
        filled: ConversationStore) -> None:
    birds = next(c for c in filled.list_conversations() if c.title == "Birds")
    filled.set_archived(birds.id)
    assert len(filled.search("egg")) == 3
    assert len(filled.search("egg", include_archived=False)) == 2
    filled.delete_conversation(birds.id)
    assert "Birds" not in [h.conversation_title for h in filled.search("egg")]
    filled.restore_conversation(birds.id)
    assert "Birds" in [h.conversation_title for h in filled.search("egg")]


def test_search_within_one_conversation_and_limit(filled: ConversationStore) -> None:
    cooking = next(c for c in filled.list_conversations() if c.title == "Cooking")
    hits = filled.search("egg", conversation_id=cooking.id)
    assert {h.conversation_id for h in hits} == {cooking.id} and len(hits) == 2
    assert len(filled.search("egg", limit=1)) == 1


def test_diacritics_are_folded(store: ConversationStore) -> None:
    conv = store.create_conversation()
    store.add_message(conv.id, "user", "Crème brûlée in Zürich")
    assert len(store.search("creme brulee zurich")) == 1


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text(max_size=40))
def test_any_text_is_a_valid_query(store: ConversationStore, text: str) -> None:
    store.search(text)
    match = build_match_query(text)
    assert match is None or match.count('"') % 2 == 0


def test_very_common_words_rank_within_the_newest_matches(
        store: ConversationStore, monkeypatch: pytest.MonkeyPatch) -> None:
    from desktop_app.core.store import search

    monkeypatch.setattr(search, "RANK_WINDOW", 3)
    conv = store.create_conversation()
    old_best = store.add_message(conv.id, "user", "cat cat cat cat")
    newer = [store.add_message(conv.id, "user", f"cat number {i}").id for i in range(3)]
    hits = store.search("cat")
    assert {h.message_id for h in hits} == set(newer)  # ranked among the 3 newest only
    assert old_best.id not in {h.message_id for h in hits}
    # A scoped search (one conversation) is not windowed.
    assert store.search("cat", conversation_id=conv.id)[0].message_id == old_best.id
