"""Synthesis sees the earlier conversation and always fits the model's window."""

from __future__ import annotations

import asyncio

from desktop_app.core.agent.react import ReActAgent
from desktop_app.core.agent.result import AgentResult, StepRecord
from desktop_app.core.agent.synthesis import fitted_synthesis_messages, synthesis_messages
from desktop_app.core.context.tokens import TokenCounter
from desktop_app.core.llm.testing import ScriptedLLM, json_final
from desktop_app.core.llm.types import ChatMessage, Usage

HISTORY = [
    ChatMessage.user("Give me a pancake recipe for 2 people.", pinned=True),
    ChatMessage.assistant('{"type": "final_answer", "answer": "Use 1 egg and 100 g flour."}'),
]


def _run(llm: ScriptedLLM, query: str, history: list[ChatMessage]) -> AgentResult:
    agent = ReActAgent(llm, [])

    async def go() -> AgentResult:
        result = await agent.run(query, history=history)
        async for _ in agent.stream_answer(query, result):
            pass
        return result

    return asyncio.run(go())


def test_a_follow_up_is_synthesised_with_the_earlier_turns() -> None:
    llm = ScriptedLLM([json_final("Use 2 eggs and 200 g flour."), "Double it."])
    _run(llm, "And for 4 people?", HISTORY)
    prompt = llm.calls("stream")[0].messages[1].content
    assert "Earlier in this conversation" in prompt
    assert "User: Give me a pancake recipe for 2 people." in prompt
    # JSON-mode answers in the history are shown as the text a person read.
    assert "Assistant: Use 1 egg and 100 g flour." in prompt
    assert prompt.index("Earlier in this conversation") < prompt.index("Question:\nAnd for 4")


def test_a_first_question_has_no_history_section() -> None:
    llm = ScriptedLLM([json_final("Hi."), "Hi."])
    _run(llm, "hello", [])
    assert "Earlier in this conversation" not in llm.calls("stream")[0].messages[1].content


def test_only_this_runs_question_is_pinned() -> None:
    llm = ScriptedLLM([json_final("ok"), "ok"])
    result = _run(llm, "next question", HISTORY)
    pinned = [m.content for m in result.messages if m.pinned]
    assert pinned == ["next question"]


def _big_result(steps: int, size: int) -> AgentResult:
    return AgentResult(
        answer="draft", iterations=steps, usage=Usage(), query="q",
        messages=[ChatMessage.system("s"), ChatMessage.user("q", pinned=True)],
        steps=[StepRecord(tool="fetch", args={"n": i}, observation=f"{i}:" + "word " * size,
                          error=None, elapsed=0.0) for i in range(steps)])


def test_many_large_results_are_cut_to_fit_a_small_window() -> None:
    llm = ScriptedLLM(context_size=2048)
    result = _big_result(steps=8, size=400)
    counter = TokenCounter(llm)
    assert counter.count_messages(synthesis_messages("q", result)) > 2048
    fitted = fitted_synthesis_messages(llm, "q", result)
    assert counter.count_messages(fitted) <= 2048 - 512
    # Every step is still named, only the results got shorter.
    assert all(f"{n}. fetch(" in fitted[1].content for n in range(1, 9))


def test_a_prompt_that_fits_is_left_alone() -> None:
    llm = ScriptedLLM(context_size=32768)
    result = _big_result(steps=2, size=50)
    assert fitted_synthesis_messages(llm, "q", result) == synthesis_messages("q", result)


def test_even_a_huge_trace_ends_up_inside_the_window() -> None:
    llm = ScriptedLLM(context_size=1024)
    result = _big_result(steps=200, size=30)
    fitted = fitted_synthesis_messages(llm, "q", result, max_tokens=256)
    assert TokenCounter(llm).count_messages(fitted) <= 1024 - 256
