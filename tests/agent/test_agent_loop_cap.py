"""Tool-loop replies are capped by default so a runaway local model cannot stall a run."""

from __future__ import annotations

import asyncio

from desktop_app.core.agent.react import DEFAULT_LOOP_MAX_TOKENS, ReActAgent
from desktop_app.core.llm.testing import ScriptedLLM, json_final


def test_loop_calls_carry_the_default_cap_and_synthesis_does_not() -> None:
    llm = ScriptedLLM([json_final("done"), "Done."])
    agent = ReActAgent(llm, [])

    async def go() -> None:
        result = await agent.run("hi")
        async for _ in agent.stream_answer("hi", result):
            pass

    asyncio.run(go())
    [loop_call] = llm.calls("chat")
    [synthesis] = llm.calls("stream")
    assert loop_call.max_tokens == DEFAULT_LOOP_MAX_TOKENS == 2048
    assert synthesis.max_tokens is None


def test_the_cap_can_be_lifted() -> None:
    llm = ScriptedLLM([json_final("done")])
    asyncio.run(ReActAgent(llm, [], max_tokens=None).run("hi"))
    assert llm.calls("chat")[0].max_tokens is None
