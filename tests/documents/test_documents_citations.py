"""Citations: passages read back from the tool's text, [n] links in rendered answers, the
app's own attribution when a model cites nothing, and the folder watch."""

from __future__ import annotations

import asyncio

from desktop_app.core.documents.citations import citation_suffix, parse_label, parse_passages
from desktop_app.ui.markdown_render import link_citations, render_segments

TOOL_TEXT = ("[1] Home/manuals/washer.pdf, page 2\nWarranty: 24 months from purchase.\n\n"
             "[2] Home/lease.md › Rent › Due date\nThe rent of 1,150 EUR is due on the 3rd.\n\n"
             "Answer from these passages. After each fact, cite the passage …")


def test_passages_are_read_back_from_the_tool_text() -> None:
    passages = parse_passages([TOOL_TEXT, "[3] Work/notes.txt\nParking: level 3."])
    assert sorted(passages) == [1, 2, 3]
    assert (passages[1].collection, passages[1].relative_path, passages[1].page) == (
        "Home", "manuals/washer.pdf", 2)
    assert passages[1].text == "Warranty: 24 months from purchase."
    assert (passages[2].heading, passages[2].page) == ("Rent › Due date", None)
    assert passages[2].text == "The rent of 1,150 EUR is due on the 3rd."
    assert parse_label("Work/notes.txt") == ("Work", "notes.txt", None, "")


def test_links_only_for_known_numbers_and_not_in_code() -> None:
    html = render_segments("Covered 24 months [1]. Rent [2][7]. Code: `x[1]`.")[0].html
    linked = link_citations(html, {1, 2})
    assert linked.count('href="cite:') == 2
    assert '<a class="cite" href="cite:1">[1]</a>' in linked and "[7]" in linked
    assert "<code>x[1]</code>" in linked
    assert link_citations(html, set()) == html


def test_attribution_cites_the_passage_the_answer_used() -> None:
    question = "When is my rent due?"
    assert citation_suffix("Your rent is due on the 3rd of the month.", [TOOL_TEXT],
                           question) == " [2]"
    assert citation_suffix("The washer has a 24 months warranty.", [TOOL_TEXT],
                           "How long is the warranty?") == " [1]"
    # Already cited by the model, or nothing in common: nothing is added.
    assert citation_suffix("It is due on the 3rd [2].", [TOOL_TEXT], question) == ""
    assert citation_suffix("I could not find that.", [TOOL_TEXT], question) == ""
    # Repeating the question's words is not evidence.
    assert citation_suffix("Your rent is due when it is due.", [TOOL_TEXT], question) == ""


def test_the_watch_picks_up_a_new_file(library, tmp_path) -> None:
    folder = tmp_path / "watched"
    folder.mkdir()
    (folder / "a.txt").write_text("Apples are red.")
    library.add_paths("W", [folder])

    async def scenario() -> None:
        watch = asyncio.ensure_future(library.watch(interval=0.05))
        try:
            for _ in range(200):
                if library.collection("W").indexed == 1:
                    break
                await asyncio.sleep(0.05)
            (folder / "b.txt").write_text("Bananas are yellow.")
            for _ in range(200):
                if library.collection("W").indexed == 2:
                    break
                await asyncio.sleep(0.05)
        finally:
            watch.cancel()
        assert library.collection("W").indexed == 2

    asyncio.run(scenario())
    assert library.search("yellow fruit", collections=["W"], limit=1)[0].path.endswith("b.txt")
