"""Small window state remembered between launches (last conversation, window geometry).

Kept in its own file next to the settings: it changes on every launch and is not something
the user configures, so it does not belong in ``settings.json``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from desktop_app.core import paths


def state_path() -> Path:
    return paths.config_dir() / "ui_state.json"


def load_state() -> dict[str, Any]:
    """The remembered state; empty when missing or unreadable (it is only a convenience)."""
    try:
        data = json.loads(state_path().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def save_state(**values: Any) -> None:
    """Merge ``values`` into the remembered state (atomic write)."""
    state = load_state()
    state.update(values)
    path = state_path()
    tmp = path.with_suffix(".json.tmp")
    try:
        tmp.write_text(json.dumps(state), encoding="utf-8")
        tmp.replace(path)
    except OSError:
        pass  # losing the window position is not worth an error dialog
