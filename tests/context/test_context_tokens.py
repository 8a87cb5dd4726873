"""Token counting: estimates per script, exact counts from a tokenizer, message overhead,
tool calls and tool payloads, and the budget derived from a model's window."""

from __future__ import annotations

import json

from desktop_app.core.context import ContextGuard, TokenCounter, count_tools, estimate_tokens
from desktop_app.core.context.tokens import (
    IMPLICIT_SYSTEM_ALLOWANCE,
    MESSAGE_OVERHEAD,
    REPLY_PRIMING,
    TOOL_RESULT_OVERHEAD,
)
from desktop_app.core.llm.testing import ScriptedLLM
from desktop_app.core.llm.types import ChatMessage, ToolCall


class WordCountLLM(ScriptedLLM):
    """A fake model whose 'tokenizer' counts words, to tell exact counts from estimates."""

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.counted: list[str] = []

    def count_tokens(self, text: str) -> int | None:
        self.counted.append(text)
        return len(text.split())


class BrokenTokenizerLLM(ScriptedLLM):
    def count_tokens(self, text: str) -> int | None:
        raise RuntimeError("tokenizer crashed")


def test_ascii_is_estimated_at_four_characters_per_token() -> None:
    assert estimate_tokens("a" * 400) == 100
    assert estimate_tokens("") == 0
    assert estimate_tokens("x") == 1


def test_cjk_is_estimated_at_one_and_a_half_characters_per_token() -> None:
    assert estimate_tokens("東" * 300) == 200
    # Mixed text adds both parts: 40 ASCII chars (10) + 30 CJK chars (20).
    assert estimate_tokens("a" * 40 + "京" * 30) == 30


def test_digits_and_punctuation_are_counted_denser_than_letters() -> None:
    # Llama/Qwen tokenizers give every digit its own token; JSON punctuation is dense too.
    assert estimate_tokens("1234567890" * 10) == 100
    assert estimate_tokens('{"":[],}' * 10) == 40
    assert estimate_tokens('{"size": 4711}') > estimate_tokens("abcdefghijklmn")


def test_exact_counts_come_from_the_models_tokenizer() -> None:
    llm = WordCountLLM()
    counter = TokenCounter(llm)
    assert counter.count_text("one two three four") == 4
    assert counter.exact
    assert llm.counted == ["one two three four"]
    counter.count_text("one two three four")
    assert len(llm.counted) == 1, "repeated texts are served from the cache"


def test_counter_estimates_when_the_model_has_no_tokenizer() -> None:
    counter = TokenCounter(ScriptedLLM())  # count_tokens returns None
    assert counter.count_text("a" * 40) == 10
    assert not counter.exact


def test_counter_estimates_when_the_tokenizer_fails() -> None:
    counter = TokenCounter(BrokenTokenizerLLM())
    assert counter.count_text("a" * 40) == 10
    assert not counter.exact


def test_every_message_pays_the_template_overhead() -> None:
    counter = TokenCounter()
    system = ChatMessage.system("b" * 40)
    message = ChatMessage.user("a" * 40)
    assert counter.count_message(message) == MESSAGE_OVERHEAD + 10
    assert counter.count_messages([system, message]) == 2 * (MESSAGE_OVERHEAD + 10) + REPLY_PRIMING


def test_a_prompt_without_system_message_allows_for_a_default_one() -> None:
    counter = TokenCounter()
    message = ChatMessage.user("a" * 40)
    assert counter.count_messages([message]) == (MESSAGE_OVERHEAD + 10 + REPLY_PRIMING
                                                 + IMPLICIT_SYSTEM_ALLOWANCE)


def test_tool_results_pay_for_their_label() -> None:
    counter = TokenCounter()
    result = ChatMessage.tool("a" * 40, tool_call_id="c1", name="calc")
    assert counter.count_message(result) >= MESSAGE_OVERHEAD + 10 + TOOL_RESULT_OVERHEAD


def test_tool_call_names_and_arguments_are_counted() -> None:
    counter = TokenCounter()
    plain = ChatMessage.assistant("")
    arguments = json.dumps({"text": "x" * 400})
    calling = ChatMessage.assistant("", tool_calls=[ToolCall(id="c1", name="write_file",
                                                             arguments=arguments)])
    assert counter.count_message(calling) - counter.count_message(plain) >= 100 + 2


def test_tools_payload_grows_with_the_specs() -> None:
    spec = {"type": "function", "function": {"name": "calc", "description": "Compute " * 20,
                                              "parameters": {"type": "object"}}}
    one = count_tools([spec])
    assert one >= estimate_tokens(json.dumps(spec))
    assert count_tools([spec, spec]) == 2 * one
    assert count_tools([]) == 0 and count_tools(None) == 0


def test_budget_is_the_window_minus_the_output_reserve() -> None:
    llm = ScriptedLLM(context_size=8192)
    assert ContextGuard.budget_for(llm) == 8192 - 1024
    assert ContextGuard.budget_for(llm, 2000) == 6192
    assert ContextGuard(output_reserve=500).budget_for(llm) == 7692
    small = ScriptedLLM(context_size=2048)
    assert ContextGuard.budget_for(small) == 2048 - 512


def test_budget_subtracts_the_tools_payload() -> None:
    llm = ScriptedLLM(context_size=8192)
    spec = {"type": "function", "function": {"name": "calc", "description": "x" * 400}}
    assert ContextGuard.budget_for(llm, tools=[spec]) == 8192 - 1024 - count_tools([spec])


def test_budget_never_drops_below_a_floor() -> None:
    llm = ScriptedLLM(context_size=4096)
    assert ContextGuard.budget_for(llm, 10_000) == 256
    tiny = ScriptedLLM(context_size=300)
    assert ContextGuard.budget_for(tiny, 10_000) == 150
