"""Notes: Markdown files under data_dir()/notes; create, list, search, read; bad inputs."""

from __future__ import annotations

from pathlib import Path

import pytest

from desktop_app.core import paths
from desktop_app.core.errors import ToolArgumentError, ToolError
from desktop_app.core.tools.builtin.notes import (
    NoteCreateTool,
    NoteReadTool,
    NotesFindTool,
    NoteStore,
    note_tools,
    parse_note,
)

pytestmark = pytest.mark.anyio


async def test_create_writes_a_markdown_file_in_the_data_dir(app_home: Path) -> None:
    result = await NoteCreateTool().run({"title": "Shopping list", "text": "- milk\n- eggs",
                                         "tags": ["home", "weekly"]})
    assert "id 'shopping-list'" in result.text
    path = paths.data_dir() / "notes" / "shopping-list.md"
    assert path.is_relative_to(app_home)
    text = path.read_text()
    assert text.startswith("---\ntitle: Shopping list\ncreated: ")
    assert "tags: home, weekly\n---\n- milk\n- eggs\n" in text


async def test_same_title_twice_never_overwrites() -> None:
    store = NoteStore()
    first = store.create("Idea", "one")
    second = store.create("Idea", "two")
    assert (first.id, second.id) == ("idea", "idea-2")
    assert store.read("idea").body == "one" and store.read("idea-2").body == "two"


async def test_list_all_notes() -> None:
    store = NoteStore()
    store.create("Alpha", "a")
    store.create("Beta", "b")
    result = await NotesFindTool().run({})
    assert result.text.startswith("2 note(s):")
    assert "- alpha: Alpha" in result.text and "- beta: Beta" in result.text


async def test_search_matches_title_tags_and_body_with_all_words() -> None:
    store = NoteStore()
    store.create("Trip to Rome", "Book the hotel near the Pantheon", tags=["travel"])
    store.create("Groceries", "hotel soap")
    result = await NotesFindTool().run({"query": "hotel travel"})
    assert "trip-to-rome" in result.text and "groceries" not in result.text
    assert "Pantheon" in result.text  # a snippet around the match


async def test_search_without_hits_and_empty_store() -> None:
    assert (await NotesFindTool().run({})).text == "There are no notes yet."
    NoteStore().create("x", "y")
    assert "No notes match 'zzz'" in (await NotesFindTool().run({"query": "zzz"})).text


async def test_read_returns_title_tags_and_body() -> None:
    NoteStore().create("Plan", "Step 1\nStep 2", tags=["work"])
    result = await NoteReadTool().run({"id": "plan"})
    assert result.text.startswith("# Plan\nCreated: ")
    assert "Tags: work" in result.text and result.text.endswith("Step 1\nStep 2")


async def test_read_unknown_id_is_a_clear_error() -> None:
    with pytest.raises(ToolError, match="There is no note 'nope'"):
        await NoteReadTool().run({"id": "nope"})


@pytest.mark.parametrize("bad", ["../secrets", "a/b", "", "x" * 200])
async def test_read_refuses_ids_that_are_not_note_names(bad: str) -> None:
    with pytest.raises(ToolArgumentError):
        await NoteReadTool().run({"id": bad})


async def test_title_cannot_inject_header_lines() -> None:
    note = NoteStore().create("Evil\ntags: injected\n---", "body")
    stored = NoteStore().read(note.id)
    assert stored.tags == [] and stored.body == "body"


async def test_empty_title_is_refused() -> None:
    with pytest.raises(ToolArgumentError, match="needs a title"):
        NoteStore().create("   ", "x")


def test_hand_written_file_without_header_is_readable() -> None:
    note = parse_note("loose", "# My heading\n\nSome text")
    assert note.title == "My heading" and note.body.endswith("Some text")


async def test_user_edited_file_is_found_by_search() -> None:
    folder = paths.data_dir() / "notes"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "typed-by-hand.md").write_text("Recipe\nflour, water, salt\n")
    result = await NotesFindTool().run({"query": "flour"})
    assert "typed-by-hand: Recipe" in result.text


def test_creating_needs_confirmation_but_reading_does_not() -> None:
    assert {t.name: t.read_only for t in note_tools()} == {
        "note_create": False, "notes_find": True, "note_read": True}


async def test_search_takes_a_question_and_plurals() -> None:
    store = NoteStore()
    store.create("Book list", "To read: Dune, Piranesi, The Hobbit.")
    store.create("Parking", "The car is parked on level 3, spot B17.")
    result = await NotesFindTool().run({"query": "Which books are on the book list?"})
    assert result.text.startswith("1 note(s) matching")
    assert "book-list: Book list" in result.text and "Parking" not in result.text
    assert "— To read: Dune, Piranesi, The Hobbit." in result.text  # short body shown whole


async def test_search_without_a_full_match_offers_the_closest() -> None:
    store = NoteStore()
    store.create("Wifi password", "The guest wifi password is sunflower42.")
    store.create("Groceries", "milk, eggs")
    result = await NotesFindTool().run({"query": "guest wifi code"})
    assert result.text.startswith("No note has every word of 'guest wifi code'; the closest 1:")
    assert "sunflower42" in result.text and "Groceries" not in result.text
