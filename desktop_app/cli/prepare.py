"""``desktop-app _prepare-assistant``: build the default local model's prompt state (its
evaluated system turn, kept on disk) in a child process, so the first question after
install does not wait for it. The window starts this once the built-in model is assembled;
a run that starts meanwhile waits for it instead of doing the same work twice."""

from __future__ import annotations

import asyncio


def run_prepare() -> int:
    from desktop_app.core.config.settings import load_settings_safe
    from desktop_app.core.errors import DesktopAppError

    settings, _note = load_settings_safe()

    async def prepare() -> None:
        from desktop_app.core.agent.factory import warm_up
        from desktop_app.core.llm.factory import build_registry
        from desktop_app.core.tools.base import ToolRegistry
        from desktop_app.core.tools.builtin import default_tools

        registry = build_registry(settings)
        llm = registry.get(registry.default_name)
        try:
            if llm.reuses_prompt_prefix:
                await warm_up(llm, ToolRegistry(default_tools(settings)))
        finally:
            await registry.aclose()

    try:
        asyncio.run(prepare())
    except DesktopAppError:
        return 1  # the first run reports what is wrong, where the person looks
    return 0
