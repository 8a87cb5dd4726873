"""Assistants: named presets of system prompt, model, tools, temperature and context size.

A few ship with the app (``resources/assistants.json``); people add their own in settings
(one with a built-in's name replaces it). A chat picks one and may override its
temperature and context size; ``agent_options`` turns that into what the agent runs with.
"""

from desktop_app.core.assistants.presets import (
    DEFAULT_ASSISTANT,
    ChatOptions,
    agent_options,
    all_assistants,
    builtin_assistants,
    find_assistant,
    tools_for,
)

__all__ = ["DEFAULT_ASSISTANT", "ChatOptions", "agent_options", "all_assistants",
           "builtin_assistants", "find_assistant", "tools_for"]
