"""Fixtures for the conversation store tests: a real SQLite file in the test's app home."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from desktop_app.core.store.conversation_store import ConversationStore


@pytest.fixture
def db_path(app_home: Path) -> Path:
    return app_home / "data" / "conversations.db"


@pytest.fixture
def store(db_path: Path) -> Iterator[ConversationStore]:
    s = ConversationStore(db_path)
    yield s
    s.close()
