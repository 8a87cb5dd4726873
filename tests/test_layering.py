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


def _module_graph() -> dict[str, set[str]]:
    """Every desktop_app module and the desktop_app modules it imports (anywhere in it:
    top level, inside functions, under TYPE_CHECKING)."""
    root = CORE.parent
    modules: dict[str, Path] = {}
    for path in root.rglob("*.py"):
        name = ".".join(path.relative_to(root.parent).with_suffix("").parts)
        modules[name.removesuffix(".__init__")] = path
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                targets = [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
            graph[name].update(t for t in targets if t in modules and t != name)
    return graph


def test_no_two_modules_import_each_other() -> None:
    # A package and its own submodules may (an __init__ re-exports); two modules may not:
    # cli/ask ↔ cli/_dag, store/secrets ↔ store/settings and tools/mcp_client ↔ mcp_tool did.
    graph = _module_graph()
    assert len(graph) > 50
    pairs = sorted({tuple(sorted((a, b))) for a, outs in graph.items() for b in outs
                    if a in graph[b] and not a.startswith(b + ".")
                    and not b.startswith(a + ".")})
    assert pairs == []


#: Packages at the bottom of core and what they must never import: the engine above them.
_LOWER = ("desktop_app.core.events", "desktop_app.core.config", "desktop_app.core.store",
          "desktop_app.core.context", "desktop_app.core.llm", "desktop_app.core.tools",
          "desktop_app.core.catalogue", "desktop_app.core.documents")
_UPPER = ("desktop_app.core.agent", "desktop_app.core.dag", "desktop_app.core.evals")


def test_the_store_context_and_lower_layers_never_import_the_engine() -> None:
    graph = _module_graph()
    offenders = sorted(f"{a} -> {b}" for a, outs in graph.items() for b in outs
                       if a.startswith(_LOWER) and b.startswith(_UPPER))
    assert offenders == []
