"""Saving the settings keeps every loaded model whose configuration did not change (the
theme used to unload them all); a changed or removed model is closed."""

from __future__ import annotations

import pytest

from desktop_app.core.config.settings import EndpointModelConfig, Settings
from desktop_app.core.llm.factory import build_registry


def _settings(model: str = "m1", theme: str = "system") -> Settings:
    settings = Settings()
    settings.bundled.enabled = False
    settings.endpoints = [
        EndpointModelConfig(name="a", base_url="http://127.0.0.1:9/v1", model=model),
        EndpointModelConfig(name="b", base_url="http://127.0.0.1:9/v1", model="other")]
    settings.ui.theme = theme  # type: ignore[assignment]
    return settings


@pytest.mark.anyio
async def test_a_theme_change_keeps_the_loaded_model_and_a_model_change_replaces_it() -> None:
    first = build_registry(_settings())
    loaded_a, loaded_b = first.get("a"), first.get("b")
    themed = build_registry(_settings(theme="dark"))
    await themed.adopt_from(first)
    assert themed.get("a") is loaded_a and themed.get("b") is loaded_b

    changed = _settings(model="m2", theme="dark")
    changed.endpoints = changed.endpoints[:1]  # "b" removed
    rebuilt = build_registry(changed)
    closed: list[str] = []
    for name, llm in (("a", loaded_a), ("b", loaded_b)):
        original = llm.aclose

        async def record(name: str = name, original: object = original) -> None:
            closed.append(name)
            await original()  # type: ignore[operator]

        llm.aclose = record  # type: ignore[method-assign]
    await rebuilt.adopt_from(themed)
    assert sorted(closed) == ["a", "b"]
    assert rebuilt.get("a") is not loaded_a  # built again from the new configuration
    await rebuilt.aclose()
