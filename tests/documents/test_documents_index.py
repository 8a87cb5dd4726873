"""Collections are indexed incrementally: unchanged files are not opened, renames move,
deletions leave the index, failures stay beside their file, cancel keeps what was done."""

from __future__ import annotations

import os
import threading

import numpy as np
import pytest
from doc_files import write_pdf

from desktop_app.core.documents import CollectionError, DocumentLibrary, SyncCancelledError
from desktop_app.core.documents import indexer as indexer_module


@pytest.fixture
def folder(tmp_path):
    root = tmp_path / "docs"
    (root / "sub").mkdir(parents=True)
    (root / "guide.md").write_text("# Network\n\nThe guest wifi password is sunflower42.\n")
    (root / "sub" / "fruit.txt").write_text("Bananas are rich in potassium.")
    write_pdf(root / "manual.pdf", ["Welcome to the manual.", "The warranty lasts 24 months."])
    (root / ".hidden.md").write_text("never indexed")
    (root / "photo.jpg").write_bytes(b"\xff\xd8 not indexed either")
    return root


@pytest.fixture
def opened(monkeypatch):
    """Paths ``convert`` was asked to read."""
    seen: list[str] = []
    real = indexer_module.convert

    def spy(path):
        seen.append(path.name)
        return real(path)

    monkeypatch.setattr(indexer_module, "convert", spy)
    return seen


def _words(library: DocumentLibrary, query: str) -> list[str]:
    return [os.path.basename(h.path) for h in library.search(query, mode="words")]


def test_first_sync_indexes_supported_files(library, folder, opened) -> None:
    library.add_paths("Home", [folder])
    report = library.sync("Home")
    assert sorted(opened) == ["fruit.txt", "guide.md", "manual.pdf"]
    assert (report.indexed, report.failed, report.pages) == (3, {}, 2)
    info = library.collection("home")  # names are case-insensitive
    assert (info.files, info.indexed, info.chunks) == (3, 3, 4)
    hit = library.search("how long is the warranty", limit=1)[0]
    assert (os.path.basename(hit.path), hit.page) == ("manual.pdf", 2)


def test_second_sync_reads_nothing_unchanged(library, folder, opened) -> None:
    library.add_paths("Home", [folder])
    library.sync("Home")
    opened.clear()
    report = library.sync("Home")
    assert opened == [] and report.unchanged == 3 and report.indexed == 0


def test_changed_added_renamed_deleted(library, folder, opened) -> None:
    library.add_paths("Home", [folder])
    library.sync("Home")
    opened.clear()
    guide = folder / "guide.md"
    guide.write_text("# Network\n\nThe guest wifi password is now tulip7.\n")
    os.utime(guide, (1_700_000_000, 1_700_000_000))
    (folder / "new.md").write_text("Parking is on level 3.")
    (folder / "sub" / "fruit.txt").rename(folder / "sub" / "bananas.txt")
    (folder / "manual.pdf").unlink()
    report = library.sync("Home")
    assert sorted(opened) == ["guide.md", "new.md"]  # the renamed file is not read again
    assert (report.indexed, report.renamed, report.removed) == (2, 1, 1)
    assert _words(library, "tulip7") == ["guide.md"]
    assert _words(library, "sunflower42") == []  # the old text left the word index too
    assert _words(library, "potassium") == ["bananas.txt"]
    assert _words(library, "warranty") == []
    assert library.search("warranty", mode="vectors") == [] or all(
        "manual" not in h.path for h in library.search("warranty", mode="vectors"))


def test_failures_are_kept_per_file_and_the_rest_is_indexed(library, folder) -> None:
    (folder / "binary.md").write_bytes(b"\x00\x01\x02")
    library.add_paths("Home", [folder])
    report = library.sync("Home")
    assert report.indexed == 3
    assert "binary file" in report.failed[str(folder / "binary.md")]
    failed = [f for f in library.files("Home") if f.status == "error"]
    assert [os.path.basename(f.path) for f in failed] == ["binary.md"]


def test_unreadable_folder_is_reported(library, folder, monkeypatch) -> None:
    real_walk = os.walk

    def walk(top, onerror=None, **kwargs):
        # Tests run as root, which reads any folder: the OS error is raised for it.
        for root, dirs, files in real_walk(top, onerror=onerror, **kwargs):
            if root.endswith("sub"):
                onerror(PermissionError(13, "Permission denied", root))
                dirs[:] = []
                continue
            yield root, dirs, files

    monkeypatch.setattr(indexer_module.os, "walk", walk)
    library.add_paths("Home", [folder])
    report = library.sync("Home")
    assert report.indexed == 2
    problems = [f for f in library.files("Home") if f.status == "error"]
    assert len(problems) == 1 and "Permission denied" in (problems[0].error or "")


def test_cancel_keeps_finished_files(library, folder) -> None:
    library.add_paths("Home", [folder])
    cancel = threading.Event()

    def progress(state):
        if state.done == 1:
            cancel.set()

    with pytest.raises(SyncCancelledError):
        library.sync("Home", progress=progress, cancel=cancel)
    assert library.collection("Home").indexed == 1
    assert library.sync("Home").indexed == 2  # the rest on the next sync


def test_a_new_embedding_model_re_embeds_without_reading_files(library, folder, opened,
                                                                tmp_path, embedder) -> None:
    library.add_paths("Home", [folder])
    library.sync("Home")
    opened.clear()

    class Other:
        model_id = "other-model"

        def __init__(self):
            self.texts = 0

        def embed(self, texts):
            self.texts += len(texts)
            return np.ones((len(texts), 384), dtype=np.float32) / np.sqrt(384)

    other = Other()
    again = DocumentLibrary(library.db.path, embedder=other)
    try:
        again.sync("Home")
        assert opened == [] and other.texts == library.collection("Home").chunks
        assert again.db.meta("embedding_model") == "other-model"
        other.texts = 0
        again.sync("Home")
        assert other.texts == 0  # done once
    finally:
        again.close()


def test_removing_a_collection_or_a_folder(library, folder, tmp_path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    (other / "x.txt").write_text("zebra crossing rules")
    library.add_paths("Home", [folder, other])
    library.sync("Home")
    library.remove_source("Home", other)
    library.sync("Home")
    assert _words(library, "zebra") == []
    library.remove_collection("Home")
    assert library.collections() == []
    with pytest.raises(CollectionError, match="no collection named 'Home'"):
        library.search("wifi", collections=["Home"])
    assert folder.joinpath("guide.md").exists()  # the user's files are never touched


def test_bad_names_and_paths(library, tmp_path) -> None:
    with pytest.raises(CollectionError, match="does not exist"):
        library.add_paths("Home", [tmp_path / "missing"])
    with pytest.raises(CollectionError, match="needs a name"):
        library.add_paths("  ", [tmp_path])


def test_an_unexpected_converter_error_stays_with_its_file(library, folder, monkeypatch) -> None:
    real = indexer_module.convert

    def flaky(path):
        if path.name == "guide.md":
            raise RuntimeError("parser bug")
        return real(path)

    monkeypatch.setattr(indexer_module, "convert", flaky)
    library.add_paths("Home", [folder])
    report = library.sync("Home")
    assert report.indexed == 2
    assert report.failed[str(folder / "guide.md")].startswith("Could not index this file "
                                                              "(RuntimeError: parser bug)")
