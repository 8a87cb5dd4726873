"""The Models window's list of installed models: one row per model, read off the Qt
thread (every GGUF header, its fit at its context, its last measured speed)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from desktop_app.core.catalogue import fit
from desktop_app.core.catalogue.fit import size_text
from desktop_app.core.catalogue.gguf_meta import GgufInfo, read_gguf
from desktop_app.core.config.settings import Settings


@dataclass
class InstalledRow:
    name: str
    path: Path | None
    info: GgufInfo | None
    context: int
    verdict: fit.Fit | None
    bench: dict[str, Any] | None
    bundled: bool


def state_text(row: InstalledRow) -> str:
    """A loaded model's State cell: in memory, and about how much (the fit estimate)."""
    return f"in memory (≈ {size_text(row.verdict.needed)})" if row.verdict else "in memory"


def read_rows(settings: Settings, benches: dict[str, Any]) -> list[InstalledRow]:
    """Runs on a worker thread: reads every model's header."""
    from desktop_app.core.catalogue.bench import model_key
    from desktop_app.core.llm.bundled import bundled_model_path, is_bundled_model_ready

    entries: list[tuple[str, Path | None, int, bool]] = []
    if settings.bundled.enabled:
        ready = is_bundled_model_ready()
        entries.append((settings.bundled.name, bundled_model_path() if ready else None,
                        settings.bundled.context_size, True))
    entries += [(m.name, Path(m.path).expanduser(), m.context_size, False)
                for m in settings.local_models]
    free = fit.available_memory()
    rows = []
    for name, path, context, bundled in entries:
        info = verdict = bench = None
        if path is not None:
            try:
                info = read_gguf(path)
                verdict = fit.judge_fit(fit.estimate_memory(info, context), free)
                stored = benches.get(model_key(path))
                bench = stored.results if stored is not None else None
            except (OSError, ValueError):
                info = None
        rows.append(InstalledRow(name, path, info, context, verdict, bench, bundled))
    return rows
