"""A tool card shows the arguments the tool ran with, not a key the model made up beside
them: the calculator card read "result": "410.00000000000005" while the result was 409.5."""

from __future__ import annotations

import pytest
from agent_helpers import Recorder

from desktop_app.core.agent import ReActAgent, drive_run
from desktop_app.core.events.run import IterationDone, IterationStart
from desktop_app.core.llm.testing import ScriptedLLM, tool_call_reply
from desktop_app.core.tools.builtin.calculator import CalculatorTool


@pytest.mark.anyio
async def test_an_invented_argument_is_not_shown_as_if_it_were_used() -> None:
    call = tool_call_reply(("calculator", {"expression": "819/2",
                                           "result": "410.00000000000005"}))
    llm = ScriptedLLM([call, "It is 409.5.", "It is 409.5."], tool_call=True)
    events = Recorder()
    outcome = await drive_run(ReActAgent(llm, [CalculatorTool()]), "What is 819/2?",
                              emit=events)
    [start] = [e for e in events.events if isinstance(e, IterationStart)]
    [done] = [e for e in events.events if isinstance(e, IterationDone)]
    assert start.tool_args == {"expression": "819/2"}
    assert "409.5" in done.observation and "410" not in done.observation
    assert outcome.result is not None and outcome.result.steps[0].args == {"expression": "819/2"}
