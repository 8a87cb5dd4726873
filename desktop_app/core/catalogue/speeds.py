"""Measured speeds of the configured local models on this machine, for the model picker
and the Compare window (``models bench`` and the Models window store them)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from desktop_app.core.catalogue.bench import model_key
from desktop_app.core.config.settings import Settings


def model_files(settings: Settings) -> dict[str, Path]:
    """The GGUF file of each configured local model that exists (nothing is assembled)."""
    from desktop_app.core.llm.bundled import bundled_model_path, is_bundled_model_ready

    files: dict[str, Path] = {}
    if settings.bundled.enabled and is_bundled_model_ready():
        files[settings.bundled.name] = bundled_model_path()
    for model in settings.local_models:
        path = Path(model.path).expanduser()
        if path.is_file():
            files[model.name] = path
    return files


def measured_speeds(settings: Settings, benchmarks: dict[str, Any]) -> dict[str, str]:
    """Model name → a one-line summary of its latest measurement here (stat()s files:
    call it off the UI thread)."""
    out = {}
    for name, path in model_files(settings).items():
        try:
            stored = benchmarks.get(model_key(path))
        except OSError:
            continue
        if stored is not None:
            out[name] = speed_text(stored.results)
    return out


def speed_text(results: dict[str, Any]) -> str:
    return (f"measured here: writes {results['generation_tokens_per_second']:.1f} tok/s, "
            f"reads {results['prompt_tokens_per_second']:.0f} tok/s, first token "
            f"{results['first_token_seconds']:.1f} s, loads in {results['load_seconds']:.1f} s")
