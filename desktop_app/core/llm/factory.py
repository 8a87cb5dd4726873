"""Build the ModelRegistry from settings: the bundled model, local GGUF files, endpoints.

Adapters are imported inside the factories so listing models never loads llama.cpp or
opens a connection.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path

from pydantic import BaseModel

from desktop_app.core import paths
from desktop_app.core.config.settings import (
    BundledModelConfig,
    EndpointModelConfig,
    LocalModelConfig,
    Settings,
)
from desktop_app.core.errors import DesktopAppError
from desktop_app.core.llm.base import LLM
from desktop_app.core.llm.registry import ModelEntry, ModelRegistry
from desktop_app.core.llm.types import make_abilities


def _local_abilities(constrained_json: bool, native_tools: bool) -> dict[str, bool]:
    # Whether a local file's template really knows tools is read when the model is built
    # (LlamaCppLLM.abilities); listing models must not open every GGUF.
    return make_abilities(tool_call=native_tools, json_mode=constrained_json, streaming=True)


def prompt_state_dir() -> Path:
    """Where local models keep the evaluated state of their system prompt."""
    return paths.cache_dir() / "prompt-states"


def _bundled_factory(cfg: BundledModelConfig) -> LLM:
    from desktop_app.core.llm.bundled import ensure_bundled_model
    from desktop_app.core.llm.llama_cpp_adapter import LlamaCppLLM

    return LlamaCppLLM(ensure_bundled_model(), name=cfg.name, context_size=cfg.context_size,
                       n_threads=cfg.n_threads, constrained_json=cfg.constrained_json,
                       native_tools=None if cfg.native_tools else False,
                       prompt_cache_dir=prompt_state_dir())


def _local_factory(cfg: LocalModelConfig) -> LLM:
    from desktop_app.core.llm.llama_cpp_adapter import LlamaCppLLM

    return LlamaCppLLM(cfg.path, name=cfg.name, context_size=cfg.context_size,
                       n_threads=cfg.n_threads, constrained_json=cfg.constrained_json,
                       chat_format=cfg.chat_format,
                       native_tools=None if cfg.native_tools else False,
                       prompt_cache_dir=prompt_state_dir(), gpu_layers=cfg.gpu_layers)


def _endpoint_factory(cfg: EndpointModelConfig) -> LLM:
    from desktop_app.core.config.secrets import get_api_key
    from desktop_app.core.llm.openai_adapter import OpenAICompatibleLLM

    def tools_rejected() -> None:
        remember_no_tool_calls(cfg)

    return OpenAICompatibleLLM(
        base_url=cfg.base_url, model=cfg.model, api_key=get_api_key(cfg.api_key_ref, cfg.api_key_env),
        name=cfg.name, context_size=cfg.context_size, timeout=cfg.timeout,
        abilities=make_abilities(tool_call=cfg.tool_call, json_mode=cfg.json_mode, streaming=True,
                                 thinking=cfg.thinking, vision=cfg.vision),
        on_tools_rejected=tools_rejected)


def _bundled_path() -> Path:
    from desktop_app.core.llm.bundled import bundled_model_path

    return bundled_model_path()


def remember_no_tool_calls(config: EndpointModelConfig) -> threading.Thread:
    """The server refused tool definitions: untick tool calling for this endpoint in the
    settings the app holds (``config`` is theirs: a later Save in the settings dialog keeps
    it off instead of switching it back) and in settings.json, written on a thread of its
    own (this is called from a reply's callback, on the window's thread), so the next start
    uses JSON mode from the first request. Returns the thread (tests wait for it)."""
    config.tool_call = False
    name = config.name

    def untick(stored: Settings) -> bool:
        for endpoint in stored.endpoints:
            if endpoint.name == name and endpoint.tool_call:
                endpoint.tool_call = False
                return True
        return False

    def persist() -> None:
        from desktop_app.core.config.settings import update_saved_settings

        try:
            update_saved_settings(untick)
        except DesktopAppError:
            return  # a broken settings file is reported where it is loaded

    # Not a daemon: `ask` may end right after the reply; the write is finished first.
    thread = threading.Thread(target=persist, name="remember-no-tool-calls")
    thread.start()
    return thread


def _key(config: BaseModel) -> str:
    """What a model is built from, as text to compare (roles only route requests to it)."""
    return json.dumps(config.model_dump(exclude={"roles"}), sort_keys=True, default=str)


def build_registry(settings: Settings) -> ModelRegistry:
    """All configured models; the default and role assignments from settings."""
    registry = ModelRegistry()
    if settings.bundled.enabled:
        b = settings.bundled
        registry.add(ModelEntry(
            name=b.name, kind="bundled", factory=lambda b=b: _bundled_factory(b),  # type: ignore[misc]
            abilities=_local_abilities(b.constrained_json, b.native_tools), context_size=b.context_size,
            roles=list(b.roles), description="Qwen2.5-Coder-0.5B-Instruct (bundled, offline)",
            config_key=_key(b), path=str(_bundled_path())))
    for cfg in settings.local_models:
        registry.add(ModelEntry(
            name=cfg.name, kind="local", factory=lambda cfg=cfg: _local_factory(cfg),  # type: ignore[misc]
            abilities=_local_abilities(cfg.constrained_json,
                                       cfg.native_tools and not cfg.chat_format), context_size=cfg.context_size,
            roles=list(cfg.roles), description=cfg.path, config_key=_key(cfg), path=cfg.path))
    for ep in settings.endpoints:
        registry.add(ModelEntry(
            name=ep.name, kind="endpoint", factory=lambda ep=ep: _endpoint_factory(ep),  # type: ignore[misc]
            abilities=make_abilities(tool_call=ep.tool_call, json_mode=ep.json_mode, streaming=True,
                                     thinking=ep.thinking, vision=ep.vision),
            context_size=ep.context_size, roles=list(ep.roles),
            description=f"{ep.model} @ {ep.base_url}", config_key=_key(ep)))
    if settings.default_model:
        registry.set_default(settings.default_model)
    for role, name in settings.roles.items():
        registry.assign_role(role, name)
    return registry
