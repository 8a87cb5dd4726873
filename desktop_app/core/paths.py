"""Where desktop-app keeps its state.

``DESKTOP_APP_HOME`` relocates everything (config, data, cache) under one folder; tests use
it to isolate themselves. Without it the platform's conventional directories are used.
"""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs

APP_NAME = "desktop-app"
HOME_ENV = "DESKTOP_APP_HOME"


def _home_override() -> Path | None:
    value = os.environ.get(HOME_ENV)
    return Path(value).expanduser() if value else None


def config_dir() -> Path:
    """Settings live here."""
    home = _home_override()
    path = home / "config" if home else Path(platformdirs.user_config_dir(APP_NAME, appauthor=False))
    path.mkdir(parents=True, exist_ok=True)
    return path


def data_dir() -> Path:
    """Conversations, notes, assembled models live here."""
    home = _home_override()
    path = home / "data" if home else Path(platformdirs.user_data_dir(APP_NAME, appauthor=False))
    path.mkdir(parents=True, exist_ok=True)
    return path


def cache_dir() -> Path:
    """Disposable files live here."""
    home = _home_override()
    path = home / "cache" if home else Path(platformdirs.user_cache_dir(APP_NAME, appauthor=False))
    path.mkdir(parents=True, exist_ok=True)
    return path


def models_dir() -> Path:
    """Assembled bundled models and other app-managed GGUF files."""
    path = data_dir() / "models"
    path.mkdir(parents=True, exist_ok=True)
    return path


def resources_dir() -> Path:
    """Icons, templates and the evaluation suites shipped with the app."""
    return Path(__file__).resolve().parents[2] / "resources"
