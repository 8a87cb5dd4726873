"""Hostile folders added to a document collection: a symlink out of the folder is never
indexed, a FIFO never opened (no hang), a file name that is not UTF-8 is reported, not a
crash (issue 26)."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest


@pytest.fixture
def library(tmp_path: Path):
    from desktop_app.core.documents import DocumentLibrary
    from desktop_app.core.documents.embedder import shared_embedder

    lib = DocumentLibrary(tmp_path / "documents.db", embedder=shared_embedder())
    yield lib
    lib.close()


def _sync_within(library, name: str, seconds: float = 60.0):
    outcome: dict[str, object] = {}

    def run() -> None:
        try:
            outcome["report"] = library.sync(name)
        except BaseException as exc:  # noqa: BLE001 - reported below
            outcome["error"] = exc

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(seconds)
    assert not worker.is_alive(), "indexing hung"
    assert "error" not in outcome, outcome.get("error")
    return outcome["report"]


def test_a_symlink_to_a_host_file_is_not_indexed(tmp_path: Path, library) -> None:
    secret = tmp_path / "outside" / "passwd.txt"
    secret.parent.mkdir()
    secret.write_text("root:HOST-SECRET-7731:0:0:root:/root:/bin/bash\n")
    folder = tmp_path / "added"
    folder.mkdir()
    (folder / "notes.txt").write_text("The guest room has a blue lamp.\n")
    os.symlink(secret, folder / "passwd.txt")
    library.add_paths("Home", [folder])
    _sync_within(library, "Home")
    hits = library.search("HOST-SECRET-7731 root bash", collections=["Home"])
    assert hits, "the control file must be searchable"
    assert all("HOST-SECRET" not in hit.text for hit in hits)
    assert all(not str(hit.path).endswith("passwd.txt") for hit in hits)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_with_a_text_name_does_not_hang_indexing(tmp_path: Path, library) -> None:
    folder = tmp_path / "added"
    folder.mkdir()
    (folder / "readme.md").write_text("# Readme\n\nThe kettle descales with vinegar.\n")
    os.mkfifo(folder / "x.txt")
    library.add_paths("Home", [folder])
    _sync_within(library, "Home", seconds=60)
    assert library.search("kettle vinegar", collections=["Home"])


def test_a_file_name_that_is_not_utf8_is_reported_not_a_crash(tmp_path: Path,
                                                               library) -> None:
    folder = tmp_path / "added"
    folder.mkdir()
    (folder / "ok.txt").write_text("Bicycle tyres at 4 bar.\n")
    bad = os.fsencode(folder) + b"/caf\xe9.txt"
    try:
        fd = os.open(bad, os.O_WRONLY | os.O_CREAT, 0o600)
    except OSError:
        pytest.skip("this file system refuses names that are not UTF-8")
    os.write(fd, b"Latin-1 name\n")
    os.close(fd)
    library.add_paths("Home", [folder])
    _sync_within(library, "Home")
    assert library.search("bicycle tyres", collections=["Home"])
