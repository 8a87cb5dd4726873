"""Words, meaning, and both fused; the tool's numbered, cited passages."""

from __future__ import annotations

import asyncio

import pytest
from doc_files import write_pdf

from desktop_app.core.documents.search import fts_query, reciprocal_rank_fusion
from desktop_app.core.tools.builtin.search_documents import SearchDocumentsTool, with_documents


@pytest.fixture
def indexed(library, tmp_path):
    root = tmp_path / "home"
    root.mkdir()
    (root / "car.md").write_text("# Parking\n\nI left the car on level 3 of the airport garage, "
                                 "space B12.\n")
    (root / "wifi.md").write_text("# Network\n\nThe guest wifi password is sunflower42.\n")
    (root / "pets.txt").write_text("Our kitten sleeps on the blue sofa most afternoons.")
    write_pdf(root / "washer.pdf", ["Model WX-200 user guide.",
                                    "Warranty: the washing machine is covered for 24 months."])
    library.add_paths("Home", [root])
    library.sync("Home")
    return library


def test_rrf_rewards_agreement() -> None:
    fused = reciprocal_rank_fusion([[1, 2, 3], [3, 1, 4]], k=60)
    assert [item for item, _ in fused] == [1, 3, 2, 4]


def test_fts_query_quotes_words_and_drops_small_ones() -> None:
    assert fts_query('What is the "wifi" password? OR NOT x*') == \
        '"wifi" OR "password" OR "not" OR "x"'
    assert fts_query("the of and") == ""


def test_words_find_exact_terms(indexed) -> None:
    assert indexed.search("sunflower42", mode="words")[0].path.endswith("wifi.md")


def test_vectors_find_meaning_without_shared_words(indexed) -> None:
    # No word of the query occurs in the passage ("cat" vs "kitten", "couch" vs "sofa").
    assert indexed.search("where does the cat nap", mode="words") == []
    assert indexed.search("where does the cat nap", mode="vectors")[0].path.endswith("pets.txt")


def test_fused_ranking_and_places(indexed) -> None:
    hit = indexed.search("How long is the guarantee on the washer?", limit=1)[0]
    assert hit.path.endswith("washer.pdf") and hit.page == 2
    assert hit.place == "washer.pdf, page 2"
    car = indexed.search("where did I park", limit=1)[0]
    assert car.place == "car.md › Parking"


def test_the_tool_numbers_and_labels_passages(indexed) -> None:
    tool = SearchDocumentsTool(indexed, ["Home"], results=2)
    first = asyncio.run(tool.run({"query": "washing machine warranty"}))
    assert first.ok
    assert first.text.startswith("[1] Home/washer.pdf, page 2\nWarranty: the washing machine")
    assert "cite" in first.text
    second = asyncio.run(tool.run({"query": "guest wifi password"}))
    labels = {line.split("] ", 1)[1]: line.split("]")[0] + "]"
              for line in second.text.splitlines() if line.startswith("[")}
    # A passage found again keeps its number; new ones go on from the last.
    assert labels["Home/wifi.md › Network"] == "[3]"
    if "Home/washer.pdf, page 2" in labels:
        assert labels["Home/washer.pdf, page 2"] == "[1]"
    assert str(indexed.collection("Home").sources[0]) not in second.text  # no home folder


def test_with_documents_skips_collections_that_are_gone(indexed) -> None:
    registry = with_documents([], indexed, ["home", "Deleted"])
    tool = registry.get("search_documents")
    assert "(Home)" in tool.description
    assert "search_documents" not in with_documents([], indexed, ["Deleted"])


def test_no_match_and_empty_query(indexed, tmp_path) -> None:
    (tmp_path / "empty").mkdir()
    indexed.add_paths("Empty", [tmp_path / "empty"])
    tool = SearchDocumentsTool(indexed, ["Empty"])
    assert asyncio.run(tool.run({"query": "wifi"})).text == "No passage in Empty matches 'wifi'."
    assert asyncio.run(tool.run({"query": "  "})).error == "The query is empty."


def test_rrf_weights() -> None:
    # A weaker ranking's first place loses to the stronger ranking's first.
    fused = reciprocal_rank_fusion([[1, 2], [2, 3]], weights=[0.5, 1.0], k=20)
    assert [item for item, _ in fused] == [2, 3, 1]
