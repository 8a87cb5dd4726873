"""Shared fixtures: one real embedding model per test session (it loads in ~0.2 s, but
there is no reason to load it per test)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))


@pytest.fixture(scope="session")
def embedder():
    from desktop_app.core.documents.embedder import shared_embedder

    return shared_embedder()


@pytest.fixture
def library(tmp_path, embedder):
    from desktop_app.core.documents import DocumentLibrary

    lib = DocumentLibrary(tmp_path / "documents.db", embedder=embedder)
    yield lib
    lib.close()
