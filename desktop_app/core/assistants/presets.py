"""Built-in and user assistants, and what one means for a run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from desktop_app.core import paths
from desktop_app.core.config.settings import AssistantConfig, Settings
from desktop_app.core.tools.base import ToolRegistry

DEFAULT_ASSISTANT = "General"


class ChatOptions(BaseModel):
    """One chat's own overrides of its assistant (None: the assistant's value)."""

    temperature: float | None = Field(default=None, ge=0.0, le=2.0)
    context_size: int | None = Field(default=None, ge=512)
    #: Document collections attached to the chat: searched for each question.
    documents: list[str] = Field(default_factory=list)
    #: Hosts of models on other computers that may receive the user's files and notes in
    #: this chat, and hosts they are kept from (asked the first time, per host).
    content_allowed_to: list[str] = Field(default_factory=list)
    content_kept_from: list[str] = Field(default_factory=list)

    def share_decisions(self) -> dict[str, bool]:
        return {**{host: False for host in self.content_kept_from},
                **{host: True for host in self.content_allowed_to}}

    def with_share_decision(self, host: str, allowed: bool) -> ChatOptions:
        allowed_to = [h for h in self.content_allowed_to if h != host]
        kept_from = [h for h in self.content_kept_from if h != host]
        (allowed_to if allowed else kept_from).append(host)
        return self.model_copy(update={"content_allowed_to": allowed_to,
                                       "content_kept_from": kept_from})


def builtin_assistants(path: Path | None = None) -> list[AssistantConfig]:
    path = path or paths.resources_dir() / "assistants.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    return [AssistantConfig(**item, builtin=True) for item in data["assistants"]]


def all_assistants(settings: Settings) -> list[AssistantConfig]:
    """Built-ins first (replaced by a user's assistant of the same name), then the user's."""
    own = {a.name: a for a in settings.assistants}
    out = [own.pop(a.name, a) for a in builtin_assistants()]
    return out + list(own.values())


def find_assistant(settings: Settings, name: str | None) -> AssistantConfig:
    """The assistant ``name``; the default one when it is None or no longer exists."""
    assistants = all_assistants(settings)
    for assistant in assistants:
        if assistant.name == name:
            return assistant
    return next((a for a in assistants if a.name == DEFAULT_ASSISTANT), assistants[0])


def tools_for(assistant: AssistantConfig, tools: ToolRegistry) -> ToolRegistry:
    """The tools ``assistant`` may use (all of them when it names none)."""
    if assistant.tools is None:
        return tools
    wanted = set(assistant.tools)
    return ToolRegistry([tool for tool in tools if tool.name in wanted])


def agent_options(assistant: AssistantConfig, options: ChatOptions,
                  llm: Any) -> dict[str, Any]:
    """``make_agent`` options for a run of ``assistant`` with a chat's ``options`` on
    ``llm``: its system prompt, the temperature, and a context limit below the model's."""
    out: dict[str, Any] = {}
    if assistant.system_prompt.strip():
        out["system_prompt"] = assistant.system_prompt.strip()
    temperature = options.temperature if options.temperature is not None \
        else assistant.temperature
    if temperature is not None:
        out["temperature"] = temperature
    limit = options.context_size or assistant.context_size
    if limit and limit < llm.context_size:
        from desktop_app.core.context import ContextGuard
        from desktop_app.core.context.guard import default_output_reserve

        # The guard keeps each prompt within ``context_size - output_reserve``: reserving
        # the part above the limit as well keeps it within the limit.
        out["context_guard"] = ContextGuard(
            llm, output_reserve=default_output_reserve(limit) + llm.context_size - limit)
    return out
