"""desktop_app/core must stay free of Qt (SPEC §1): checked by reading every import."""

from __future__ import annotations

import ast
from pathlib import Path

CORE = Path(__file__).resolve().parents[1] / "desktop_app" / "core"
FORBIDDEN = ("PySide6", "qasync", "shiboken6", "desktop_app.ui")


def _imports(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.append(node.module)
    return names


def test_core_never_imports_qt_or_ui() -> None:
    files = list(CORE.rglob("*.py"))
    assert len(files) > 5
    offenders = [f"{f.relative_to(CORE)}: {name}" for f in files for name in _imports(f)
                 if name.split(".")[0] in FORBIDDEN or name.startswith("desktop_app.ui")]
    assert offenders == []
