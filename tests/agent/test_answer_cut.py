"""Every answer that stops early says why (issue 27: a 400-word story ended at "...in a
circle. Tim" with no reason, and a stopped answer's footer said "0 in / 0 out tokens")."""

from __future__ import annotations

import asyncio

import pytest
from agent_helpers import Recorder

from desktop_app.core.agent import ReActAgent, drive_run
from desktop_app.core.events.run import AnswerDelta, Done
from desktop_app.core.llm.testing import ScriptedLLM, tool_call_reply
from desktop_app.core.llm.types import ChatMessage, LLMResult, Usage
from desktop_app.core.tools.builtin.calculator import CalculatorTool

pytestmark = pytest.mark.anyio


def _done(events: Recorder) -> Done:
    [done] = [e for e in events.events if isinstance(e, Done)]
    return done


def _cut_off(text: str) -> LLMResult:
    return LLMResult(message=ChatMessage.assistant(text), finish_reason="length",
                     usage=Usage.of(50, 64))


async def test_a_live_answer_at_the_length_limit_says_so() -> None:
    llm = ScriptedLLM([_cut_off("Once upon a time a fox walked in a circle. Tim")],
                      tool_call=True)
    events = Recorder()
    await drive_run(ReActAgent(llm, [CalculatorTool()]), "Write a story.", emit=events)
    assert _done(events).cut == "length"


async def test_a_synthesis_at_the_length_limit_says_so() -> None:
    call = tool_call_reply(("calculator", {"expression": "6*7"}))
    llm = ScriptedLLM([call, "42", _cut_off("The result is 42, and")], tool_call=True)
    events = Recorder()
    await drive_run(ReActAgent(llm, [CalculatorTool()]), "What is 6*7?", emit=events)
    assert _done(events).cut == "length"


async def test_a_stopped_loop_says_so_and_a_finished_answer_says_nothing() -> None:
    looping = ScriptedLLM(["A generator yields values. " + "It is lazy. " * 100],
                          tool_call=True)
    events = Recorder()
    await drive_run(ReActAgent(looping, [CalculatorTool()], guard_repetition=True),
                    "Explain a Python generator.", emit=events)
    assert _done(events).cut == "repetition"
    plain = ScriptedLLM(["A generator yields values lazily."], tool_call=True)
    events = Recorder()
    await drive_run(ReActAgent(plain, [CalculatorTool()], guard_repetition=True),
                    "Explain a Python generator.", emit=events)
    assert _done(events).cut is None and not _done(events).cancelled


async def test_a_stopped_answer_counts_the_words_it_showed() -> None:
    started = asyncio.Event()

    def slow(_request: object) -> LLMResult:
        return LLMResult(message=ChatMessage.assistant("word " * 400), finish_reason="stop",
                         usage=Usage.of(80, 400))

    llm = ScriptedLLM([slow], tool_call=True, chunk_size=5, delay=0.01)
    events = Recorder()

    async def run() -> None:
        await drive_run(ReActAgent(llm, [CalculatorTool()]), "Say word.", emit=events)

    async def watch() -> None:
        while not any(isinstance(e, AnswerDelta) for e in events.events):
            await asyncio.sleep(0.01)
        started.set()

    task = asyncio.ensure_future(run())
    await asyncio.wait_for(watch(), 10)
    await asyncio.sleep(0.1)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    done = _done(events)
    assert done.cancelled and done.answer
    assert done.usage.completion_tokens > 0  # not "0 out tokens"
