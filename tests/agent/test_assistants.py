"""Assistant presets: built-ins, the user's own, and what one means for a run."""

from __future__ import annotations

import pytest

from desktop_app.cli import main
from desktop_app.core.assistants import (
    ChatOptions,
    agent_options,
    all_assistants,
    find_assistant,
    tools_for,
)
from desktop_app.core.config.settings import AssistantConfig, Settings, save_settings
from desktop_app.core.llm.testing import ScriptedLLM
from desktop_app.core.tools.base import ToolRegistry
from desktop_app.core.tools.builtin import default_tools


def test_builtins_name_only_tools_that_exist(tmp_path) -> None:
    registry = ToolRegistry(default_tools(Settings(tools={"workspace": str(tmp_path)})))
    for assistant in all_assistants(Settings()):
        if assistant.tools:
            assert set(assistant.tools) <= set(registry.names()), assistant.name
            assert tools_for(assistant, registry).names()


def test_a_users_assistant_replaces_a_builtin_of_the_same_name() -> None:
    settings = Settings(assistants=[AssistantConfig(name="Writer", system_prompt="Mine."),
                                    AssistantConfig(name="Pirate")])
    names = [(a.name, a.builtin) for a in all_assistants(settings)]
    assert ("Writer", False) in names and ("Writer", True) not in names
    assert names[-1] == ("Pirate", False)
    assert find_assistant(settings, "gone").name == "General"  # deleted: the default


def test_agent_options_prompt_temperature_and_context_limit() -> None:
    llm = ScriptedLLM(["x"], context_size=8192)
    writer = AssistantConfig(name="W", system_prompt="Write well.", temperature=0.7,
                             context_size=2048)
    options = agent_options(writer, ChatOptions(), llm)
    assert options["system_prompt"] == "Write well." and options["temperature"] == 0.7
    budget = options["context_guard"].budget_for(llm)
    assert 1000 < budget <= 2048  # the prompt stays within the 2,048-token limit
    own = agent_options(writer, ChatOptions(temperature=1.2, context_size=4096), llm)
    assert own["temperature"] == 1.2 and 2048 < own["context_guard"].budget_for(llm) <= 4096
    assert agent_options(AssistantConfig(name="G"), ChatOptions(), llm) == {}


def test_ask_with_an_unknown_assistant_names_the_real_ones(capsys) -> None:
    save_settings(Settings(bundled={"enabled": False}, endpoints=[{
        "name": "x", "base_url": "http://127.0.0.1:9/v1", "model": "m"}]))
    assert main(["ask", "--assistant", "Nobody", "hello"]) == 2
    err = capsys.readouterr().err
    assert "no assistant named 'Nobody'" in err and "Translator" in err


@pytest.mark.parametrize("bad", [{"temperature": 3}, {"context_size": 10}])
def test_chat_options_are_validated(bad) -> None:
    with pytest.raises(ValueError):
        ChatOptions(**bad)
