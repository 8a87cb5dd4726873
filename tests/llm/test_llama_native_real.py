"""The bundled model through its trained tool-call format, on the real llama.cpp.

These are the behaviours the agent's defaults rest on (README, "Agent quality"): a forced
call is always a well-formed call, ``tool_choice="none"`` always gives text, a direct
answer streams as text while tools are offered, and the system turn's evaluated state is
restored from disk by a freshly loaded model.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from desktop_app.core.llm.llama_cpp_adapter import LlamaCppLLM
from desktop_app.core.llm.types import ChatMessage
from desktop_app.core.tools.builtin.calculator import CalculatorTool

pytestmark = pytest.mark.real_model

CALCULATOR = CalculatorTool().spec()
SYSTEM = ChatMessage.system("You are a helpful assistant. Use tools when they help.")


def test_a_forced_call_is_always_a_valid_call_of_that_tool(bundled_llm: LlamaCppLLM) -> None:
    # A question that has nothing to do with arithmetic: only the grammar makes it a call.
    result = asyncio.run(bundled_llm.chat(
        [SYSTEM, ChatMessage.user("Tell me a short joke about cats.")], tools=[CALCULATOR],
        tool_choice={"type": "function", "function": {"name": "calculator"}},
        max_tokens=80, temperature=0.0))
    calls = result.message.tool_calls
    assert len(calls) == 1 and calls[0].name == "calculator"
    assert isinstance(calls[0].parsed_arguments().get("expression"), str)
    assert "<tool_call>" not in result.message.content


def test_tool_choice_required_is_a_valid_call_of_one_of_the_tools(
        bundled_llm: LlamaCppLLM) -> None:
    from desktop_app.core.tools.builtin.units import UnitConvertTool

    result = asyncio.run(bundled_llm.chat(
        [SYSTEM, ChatMessage.user("Tell me a short joke about cats.")],
        tools=[CALCULATOR, UnitConvertTool().spec()], tool_choice="required",
        max_tokens=80, temperature=0.0))
    [call] = result.message.tool_calls
    assert call.name in ("calculator", "convert_units")
    required = {"calculator": {"expression"}, "convert_units": {"value", "from_unit", "to_unit"}}
    assert required[call.name] <= set(call.parsed_arguments())


def test_tool_choice_none_gives_text_even_for_a_question_the_tool_answers(
        bundled_llm: LlamaCppLLM) -> None:
    result = asyncio.run(bundled_llm.chat(
        [SYSTEM, ChatMessage.user("What is 1234*5678?")], tools=[CALCULATOR],
        tool_choice="none", max_tokens=40, temperature=0.0))
    assert not result.message.tool_calls
    assert result.message.content.strip() and "<tool_call>" not in result.message.content


def test_a_direct_answer_streams_as_text_while_tools_are_offered(
        bundled_llm: LlamaCppLLM) -> None:
    async def run() -> tuple[list[str], int]:
        pieces: list[str] = []
        calls = 0
        async for chunk in bundled_llm.stream_chat(
                [SYSTEM, ChatMessage.user("Explain what a Python generator is in one sentence.")],
                tools=[CALCULATOR], max_tokens=60, temperature=0.0):
            calls += len(chunk.tool_calls)
            if chunk.content:
                pieces.append(chunk.content)
        return pieces, calls

    pieces, calls = asyncio.run(run())
    assert calls == 0
    assert len(pieces) >= 5  # arrived token by token, not held back until the end
    text = "".join(pieces)
    assert "generator" in text.lower() and "<tool_call>" not in text


def test_a_new_process_restores_the_system_turn_from_disk(bundled_model_path: Path,
                                                          tmp_path: Path) -> None:
    long_system = ChatMessage.system("You are a careful assistant. " * 60)
    question = [long_system, ChatMessage.user("Say hi.")]

    def ask(name: str) -> tuple[str, int, int]:
        llm = LlamaCppLLM(bundled_model_path, name=name, context_size=2048,
                          prompt_cache_dir=tmp_path)

        async def run() -> None:
            try:
                await llm.chat(question, tools=[CALCULATOR], max_tokens=4, temperature=0.0)
            finally:
                await llm.aclose()

        asyncio.run(run())
        stats = llm.last_stats
        assert stats is not None
        return stats.prefix_source, stats.prompt_eval_tokens, stats.prompt_tokens

    first_source, _, prompt_tokens = ask("first")
    assert first_source == "saved" and list(tmp_path.glob("*.state"))
    second_source, second_evaluated, _ = ask("second")  # a fresh model: empty KV cache
    assert second_source == "disk"
    # Only the question's own tokens were evaluated, not the 400-token system turn.
    assert second_evaluated < 40 < prompt_tokens - 300


def test_warm_up_puts_the_run_s_system_turn_in_the_cache(bundled_model_path: Path,
                                                        tmp_path: Path) -> None:
    """What the window does after loading: the first question then only evaluates itself,
    in the policy's first decision and in the answer after it."""
    from desktop_app.core.agent.factory import make_agent, warm_up
    from desktop_app.core.agent.runner import drive_run
    from desktop_app.core.tools.base import ToolRegistry
    from desktop_app.core.tools.builtin import default_tools

    llm = LlamaCppLLM(bundled_model_path, name="warm", context_size=4096,
                      prompt_cache_dir=tmp_path)
    tools = ToolRegistry(default_tools())
    seen: list[Any] = []
    choose = llm.choose_tool

    async def recording_choose(*args: Any, **kwargs: Any) -> Any:
        chosen = await choose(*args, **kwargs)
        seen.append(llm.last_stats)
        return chosen

    llm.choose_tool = recording_choose  # type: ignore[method-assign]

    async def run() -> None:
        try:
            await warm_up(llm, tools)
            await drive_run(make_agent(llm, tools, max_tokens=8),
                            "What is the capital of France?", emit=lambda event: None)
        finally:
            await llm.aclose()

    asyncio.run(run())
    decision = seen[0]
    assert decision is not None and decision.prefix_source == "memory"
    assert decision.prompt_eval_tokens < 40 < decision.prompt_tokens
    answer = llm.last_stats  # a plain-chat answer: its prompt is the question alone
    assert answer is not None and answer.prompt_eval_tokens < 60


def test_documents_warm_up_prepares_the_first_question_of_a_chat_with_documents(
        bundled_model_path: Path, tmp_path: Path) -> None:
    """Attaching documents adds ``search_documents``: another system turn. Without its state
    prepared, the first question there evaluated it first (14.8 s to the first word against
    4.1 s, 3 files, measured)."""
    from desktop_app.core.agent.factory import make_agent, warm_up, warm_up_documents
    from desktop_app.core.agent.runner import drive_run
    from desktop_app.core.documents import DocumentLibrary
    from desktop_app.core.documents.embedder import shared_embedder
    from desktop_app.core.tools.base import ToolRegistry
    from desktop_app.core.tools.builtin import default_tools
    from desktop_app.core.tools.builtin.search_documents import with_documents

    folder = tmp_path / "home"
    folder.mkdir()
    (folder / "wifi.md").write_text("# Wifi\n\nGuest network: HomeGuest, password sunny-day-7.\n")
    library = DocumentLibrary(tmp_path / "documents.db", embedder=shared_embedder())
    library.add_paths("Home", [folder])
    library.sync("Home")
    llm = LlamaCppLLM(bundled_model_path, name="docs", context_size=4096,
                      prompt_cache_dir=tmp_path / "states")
    tools = ToolRegistry(default_tools())
    seen: list[Any] = []
    stream = llm.stream_chat

    async def recording_stream(*args: Any, **kwargs: Any) -> Any:
        try:
            async for chunk in stream(*args, **kwargs):
                yield chunk
        finally:
            seen.append(llm.last_stats)

    llm.stream_chat = recording_stream  # type: ignore[method-assign]

    async def run() -> None:
        try:
            await warm_up(llm, tools)  # what loading the model does: the chat without them
            await warm_up_documents(llm, tools, library, ["Home"])
            await drive_run(make_agent(llm, with_documents(tools, library, ["Home"]),
                                       max_tokens=8),
                            "What is the guest wifi password?", emit=lambda event: None)
        finally:
            await llm.aclose()
            library.close()

    asyncio.run(run())
    turn = seen[0]  # the model's turn after the policy's search
    assert turn is not None and turn.prefix_source == "memory"
    # Only the question, the search call and its passage were evaluated.
    assert turn.prompt_eval_tokens < turn.prompt_tokens - 300


class _ThinkingLLM(LlamaCppLLM):
    """The bundled model made to write what a reasoning model writes: a grammar forces
    the exact text, so the real llama.cpp stream (token by token) goes through the
    adapter's splitting. (No reasoning GGUF ships through the package registries.)"""

    reply = ('<think>\nThe user wants 2+2. I could call '
             '<tool_call>{"name": "calculator", "arguments": {"expression": "2+2"}}</tool_call>'
             '\n</think>\n\nThe answer is 4.')

    def _request(self, *args: object, **kwargs: object) -> dict[str, object]:
        request = super()._request(*args, **kwargs)  # type: ignore[arg-type]
        literal = self.reply.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
        request["_grammar"] = f'root ::= "{literal}"'
        return request


def test_think_blocks_of_a_local_model_are_split_from_the_answer_and_never_run(
        bundled_model_path: Path) -> None:
    llm = _ThinkingLLM(bundled_model_path, context_size=1024)

    async def run() -> tuple[str, str, list[object], str | None]:
        content, reasoning, calls = [], [], []
        async for chunk in llm.stream_chat([SYSTEM, ChatMessage.user("What is 2+2?")],
                                           tools=[CALCULATOR], max_tokens=120):
            content.append(chunk.content)
            reasoning.append(chunk.reasoning)
            calls.extend(chunk.tool_calls)
        whole = await llm.chat([SYSTEM, ChatMessage.user("What is 2+2?")], max_tokens=120)
        await llm.aclose()
        return "".join(content), "".join(reasoning), calls, whole.message.reasoning_content

    content, reasoning, calls, whole_reasoning = asyncio.run(run())
    assert content == "The answer is 4."
    assert reasoning.startswith("The user wants 2+2.") and "<think>" not in reasoning
    assert calls == []  # a call quoted in the thinking is not a call
    assert whole_reasoning is not None and whole_reasoning.endswith("</tool_call>")
