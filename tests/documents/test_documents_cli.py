"""`desktop-app docs …` and `ask --docs`: the real CLI, a real index, and for `ask` a hosted
model played by an OpenAI-compatible server on loopback, which records what it was sent."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from doc_files import write_pdf

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "llm"))
from fake_openai_server import Reply, chunk, fake_server, use_endpoint  # noqa: F401

from desktop_app.cli import main


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    root = tmp_path / "papers"
    root.mkdir()
    write_pdf(root / "washer.pdf", ["Model WX-200 user guide.",
                                    "Warranty: the washing machine is covered for 24 months."])
    (root / "wifi.md").write_text("# Network\n\nThe guest wifi password is sunflower42.\n")
    (root / "broken.pdf").write_bytes(b"%PDF-1.4 not really")
    return root


def test_add_list_search_reindex_rm(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["docs", "add", str(folder), "--collection", "Home"]) == 0
    err = capsys.readouterr().err
    assert "Home: 2 indexed (2 pages, 3 passages)" in err
    assert f"✗ {folder / 'broken.pdf'}: This PDF is damaged" in err

    assert main(["docs", "list"]) == 0
    out = capsys.readouterr().out
    assert "Home: 2 files indexed, 3 passages, 1 failed" in out and str(folder) in out

    assert main(["docs", "search", "how", "long", "is", "the", "warranty", "-n", "2"]) == 0
    first = capsys.readouterr().out.splitlines()[0].split("\t")
    assert first[:2] == [str(folder / "washer.pdf"), "page 2"]
    assert first[2].startswith("Warranty: the washing machine")

    (folder / "parking.txt").write_text("The car is on level 3.")
    assert main(["docs", "reindex"]) == 0
    assert "Home: 1 indexed" in capsys.readouterr().err

    assert main(["docs", "rm", "Home"]) == 0
    capsys.readouterr()
    assert main(["docs", "search", "wifi", "-c", "Home"]) == 2
    assert "no collection named 'Home'" in capsys.readouterr().err
    assert (folder / "wifi.md").exists()


def test_ask_with_docs_on_a_hosted_model_sends_passages_only_when_it_searches(
        fake_server, app_home: Path, folder: Path,  # noqa: F811
        capsys: pytest.CaptureFixture[str]) -> None:
    """A hosted model is offered the search of the attached collection and calls it itself
    (the user sees the call); nothing is searched and sent before it asks."""
    assert main(["docs", "add", str(folder), "-c", "Home"]) == 0
    use_endpoint(app_home, fake_server.base_url)
    search = {"id": "call_1", "type": "function", "function": {
        "name": "search_documents", "arguments": '{"query": "washer warranty"}'}}
    fake_server.add(Reply(sse=[chunk(tool_calls=[{"index": 0, **search}],
                                     finish_reason="tool_calls")]),
                    Reply(sse=[chunk("The warranty lasts 24 months [1].",
                                     finish_reason="stop")]))
    assert main(["ask", "--docs", "home", "How long is the washer's warranty?"]) == 0
    out, err = capsys.readouterr()
    assert "24 months [1]" in out
    assert "search_documents" in err  # the step is shown
    first = fake_server.requests[0].json["messages"]
    assert not [m for m in first if m["role"] == "tool"]  # nothing read before it asked
    assert "24 months" not in str(first)
    sent = fake_server.requests[1].json["messages"]
    tool = [m for m in sent if m["role"] == "tool"]
    assert tool and tool[0]["content"].startswith(
        "[1] Home/washer.pdf, page 2\nWarranty: the washing machine is covered for 24 months.")
    assert str(folder) not in str(sent)  # the user's folders are not told to the server


def test_ask_with_an_unknown_collection(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["ask", "--docs", "Nope", "hi"]) == 2
    assert "no collection named 'Nope'" in capsys.readouterr().err
