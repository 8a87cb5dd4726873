"""The composer's context gauge: estimated fill of the model's window before sending."""

from __future__ import annotations

from desktop_app.core.context.gauge import ContextFill, base_tokens
from desktop_app.core.context.tokens import estimate_tokens
from desktop_app.core.llm.types import ChatMessage
from desktop_app.core.tools.builtin.calculator import CalculatorTool


def test_base_counts_system_prompt_history_and_tools() -> None:
    history = [ChatMessage.user("What is 2+2?"), ChatMessage.assistant("4")]
    bare = base_tokens([], system_prompt="Be brief.", tool_specs=None)
    with_history = base_tokens(history, system_prompt="Be brief.", tool_specs=None)
    with_tools = base_tokens(history, system_prompt="Be brief.",
                             tool_specs=[CalculatorTool().spec()])
    assert bare < with_history < with_tools
    assert with_history - bare >= estimate_tokens("What is 2+2?") + estimate_tokens("4")


def test_levels_labels_and_what_the_tooltip_says() -> None:
    assert ContextFill(500, 8192).level == "ok"
    high = ContextFill(6000, 8192)
    assert high.level == "high" and "summarised" in high.explanation()
    full = ContextFill.with_draft(7000, "word " * 400, 8192)
    assert full.used == 7000 + estimate_tokens("word " * 400)
    assert full.level == "full" and full.label() == f"Context {full.used / 1000:.1f}k / 8.2k"
    assert "oldest messages will be summarised" in full.explanation()
    assert ContextFill(950, 4096).label() == "Context 950 / 4.1k"
    assert ContextFill.with_draft(100, "   ", 4096).used == 100  # blank drafts add nothing
