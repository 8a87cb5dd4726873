"""The small-model policy: the model's own choice between answering and each tool, read
from a few tokens; hosted models get no policy; the loop knows nothing of it."""

from __future__ import annotations

import inspect
import re
from collections.abc import Sequence
from datetime import date
from pathlib import Path
from typing import Any

import pytest

from desktop_app.core.agent import drive_run
from desktop_app.core.agent.factory import make_agent
from desktop_app.core.llm.base import ToolSpec
from desktop_app.core.llm.testing import ScriptedLLM, tool_call_reply
from desktop_app.core.llm.types import ChatMessage
from desktop_app.core.local_policy import RoutingPolicy, policy_for
from desktop_app.core.local_policy.routing import (
    FIRST_CALL_MAX_TOKENS,
    PURE_CALL_MAX_TOKENS,
    REPLY,
)
from desktop_app.core.tools.base import ToolRegistry
from desktop_app.core.tools.builtin.calculator import CalculatorTool
from desktop_app.core.tools.builtin.clock import ClockTool
from desktop_app.core.tools.builtin.dates import DateCalcTool
from desktop_app.core.tools.builtin.reports import TableTool
from desktop_app.core.tools.builtin.units import UnitConvertTool


class LocalFake(ScriptedLLM):
    """A scripted local model that also answers ``choose_tool`` from a script."""

    def __init__(self, replies: Sequence[Any], choices: Sequence[str | None]) -> None:
        super().__init__(replies, tool_call=True)
        self.choices = list(choices)
        self.offered: list[list[str]] = []
        self.among: list[list[str]] = []

    @property
    def reuses_prompt_prefix(self) -> bool:
        return True

    async def choose_tool(self, messages: Sequence[ChatMessage],
                          tools: list[ToolSpec]) -> str | None:
        self.offered.append([t["function"]["name"] for t in tools])
        return self.choices.pop(0)

    async def choose_among(self, messages: Sequence[ChatMessage], tools: list[ToolSpec],
                           names: Sequence[str]) -> str | None:
        self.among.append(list(names))
        return self.choices.pop(0)


def test_hosted_models_get_no_policy() -> None:
    assert policy_for(ScriptedLLM([], tool_call=True)) is None
    assert isinstance(policy_for(LocalFake([], [])), RoutingPolicy)


@pytest.mark.anyio
async def test_an_answer_decision_is_answered_as_plain_chat_without_tools() -> None:
    llm = LocalFake(["Hamlet is a prince of Denmark…"], [None])
    outcome = await drive_run(make_agent(llm, ToolRegistry([CalculatorTool(), TableTool()])),
                              "Write a plot summary of Hamlet", emit=lambda e: None)
    assert outcome.answer.startswith("Hamlet is a prince")
    request = llm.requests[-1]
    assert not request.tools  # no tool could be called, and none is in the prompt
    assert all(m.role != "system" for m in request.messages)  # the template's own turn
    assert llm.offered == [["calculator", "make_table", REPLY]]  # "reply" offered last


@pytest.mark.anyio
async def test_a_tool_decision_forces_that_tool_on_the_first_turn_only() -> None:
    llm = LocalFake([tool_call_reply(("calculator", {"expression": "2+2"})), "It is 4."],
                    ["calculator"])
    outcome = await drive_run(make_agent(llm, ToolRegistry([CalculatorTool(), TableTool()])),
                              "two plus two?", emit=lambda e: None)
    first, later = llm.requests[0], llm.requests[1:]
    assert first.tool_choice == {"type": "function", "function": {"name": "calculator"}}
    assert all(r.tool_choice in (None, "auto") for r in later)
    assert "4" in outcome.answer


@pytest.mark.anyio
async def test_a_choice_of_the_reply_stand_in_is_an_answer_too() -> None:
    llm = LocalFake(["Bonjour !"], [REPLY])
    outcome = await drive_run(make_agent(llm, ToolRegistry([CalculatorTool()])),
                              "Dis bonjour", emit=lambda e: None)
    assert outcome.answer == "Bonjour !" and not llm.requests[-1].tools


@pytest.mark.anyio
async def test_a_call_of_a_made_up_tool_chooses_again_among_checkable_tools() -> None:
    """The bundled model began "calculate_tip" for sums it then did in its head: it chooses
    again among the tools that only compute from what they are given (not the clock, not
    a maker) and answering, and the call it then writes is made."""
    sum_call = ("calculator", {"expression": "86.40 * 1.15"})
    llm = LocalFake([tool_call_reply(sum_call), "It comes to 99.36."],
                    ["calculate_tip", "calculator"])
    tools = ToolRegistry([CalculatorTool(), ClockTool(), TableTool()])
    outcome = await drive_run(make_agent(llm, tools), "dinner was 86.40, plus 15% tip?",
                              emit=lambda e: None)
    assert llm.among == [["calculator", REPLY]]
    assert llm.requests[0].tool_choice == {"type": "function",
                                           "function": {"name": "calculator"}}
    assert [s.tool for s in outcome.result.steps] == ["calculator"]
    assert "99.36" in outcome.answer


@pytest.mark.anyio
async def test_a_first_call_of_a_tool_that_only_computes_gets_a_short_bound() -> None:
    """A calculator call is a short expression; one written on and on ("2 * 2 + 2 * 2 + …"
    for a question with no number in it) is cut long before a report's bound."""
    calls = [tool_call_reply(("calculator", {"expression": "2+2"})), "4.",
             tool_call_reply(("make_table", {"title": "T", "rows": [["a"]]})), "Done."]
    llm = LocalFake(calls, ["calculator", "make_table"])
    agent = make_agent(llm, ToolRegistry([CalculatorTool(), TableTool()]))
    await drive_run(agent, "two plus two?", emit=lambda e: None)
    await drive_run(agent, "a table of a", emit=lambda e: None)
    forced = [r.max_tokens for r in llm.requests if isinstance(r.tool_choice, dict)]
    assert forced == [PURE_CALL_MAX_TOKENS, FIRST_CALL_MAX_TOKENS]
    assert PURE_CALL_MAX_TOKENS < FIRST_CALL_MAX_TOKENS


@pytest.mark.anyio
async def test_a_made_up_call_must_hold_the_user_s_own_numbers() -> None:
    """Chosen again from a made-up name, a call on today's date alone is not made (a
    limerick became a date calculation from today): the request is answered in words."""
    today_call = ("date_calc", {"date": date.today().isoformat(), "days": 1})
    llm = LocalFake([tool_call_reply(today_call), "A cat who hated Mondays…"],
                    ["cat_limerick", "date_calc"])
    outcome = await drive_run(make_agent(llm, ToolRegistry([CalculatorTool(), DateCalcTool()])),
                              "a limerick about a cat who hates mondays",
                              emit=lambda e: None)
    assert llm.among == [["calculator", "date_calc", REPLY]]
    assert not outcome.result.steps
    assert outcome.answer.startswith("A cat") and not llm.requests[-1].tools


@pytest.mark.anyio
async def test_a_made_up_call_chosen_again_as_an_answer_is_answered_in_words() -> None:
    llm = LocalFake(["Sky blue: sunlight scatters."], ["sky_color", REPLY])
    outcome = await drive_run(make_agent(llm, ToolRegistry([CalculatorTool()])),
                              "why is the sky blue", emit=lambda e: None)
    assert outcome.answer.startswith("Sky blue") and not outcome.result.steps


@pytest.mark.anyio
async def test_a_first_call_that_fails_is_chosen_again_among_the_other_tools() -> None:
    """"18 miles" sent to the calculator fails on the user's own number; shown the error,
    the bundled model wrote the same call again and the answer became the error. It
    chooses again without the calculator, and the call it then writes is made."""
    failing = ("calculator", {"expression": "18 miles"})
    converting = ("convert_units", {"value": 18, "from_unit": "miles", "to_unit": "km"})
    llm = LocalFake([tool_call_reply(failing), tool_call_reply(converting), "Done.",
                     "18 miles is 28.97 km."], ["calculator", "convert_units"])
    tools = ToolRegistry([CalculatorTool(), UnitConvertTool(), ClockTool(), TableTool()])
    outcome = await drive_run(make_agent(llm, tools), "ran 18 miles today, in km?",
                              emit=lambda e: None)
    assert llm.among == [["convert_units", REPLY]]  # not the calculator again, nor the clock
    assert [r.tool_choice for r in llm.requests[:2]] == [
        {"type": "function", "function": {"name": name}}
        for name in ("calculator", "convert_units")]
    assert [(s.tool, s.error) for s in outcome.result.steps] == [("convert_units", None)]
    assert "28.97" in outcome.answer


@pytest.mark.anyio
async def test_a_first_call_that_fails_and_no_other_tool_is_answered_in_words() -> None:
    """No error reaches the answer: with the calculator's call failing and the model then
    choosing to answer, the request is answered as plain chat, with no tool run."""
    failing = ("calculator", {"expression": "73219 / 29, rounded to 2 dp"})
    llm = LocalFake([tool_call_reply(failing), "About 2524.79."], ["calculator", REPLY])
    outcome = await drive_run(make_agent(llm, ToolRegistry([CalculatorTool(), DateCalcTool()])),
                              "73219 / 29 to 2 dp", emit=lambda e: None)
    assert llm.among == [["date_calc", REPLY]]
    assert not outcome.result.steps and outcome.answer == "About 2524.79."
    assert not llm.requests[-1].tools


@pytest.mark.anyio
async def test_a_call_chosen_again_that_fails_too_ends_in_a_plain_answer() -> None:
    failing = ("calculator", {"expression": "220C * 9/5"})
    also_failing = ("convert_units", {"value": 220, "from_unit": "C", "to_unit": "parsecs"})
    llm = LocalFake([tool_call_reply(failing), tool_call_reply(also_failing), "428 °F."],
                    ["calculator", "convert_units", REPLY])
    outcome = await drive_run(make_agent(llm, ToolRegistry([CalculatorTool(), UnitConvertTool()])),
                              "220C to F", emit=lambda e: None)
    assert llm.among == [["convert_units", REPLY], [REPLY]]
    assert not outcome.result.steps and outcome.answer == "428 °F."


@pytest.mark.anyio
async def test_the_run_ends_once_a_tool_made_what_was_asked() -> None:
    """After a successful table the loop stops; the answer is written from the trace (the
    bundled model otherwise made the same table again and again)."""
    table = ("make_table", {"title": "Planets", "rows": [["Mercury", "1"]]})
    llm = LocalFake([tool_call_reply(table), "Here is the table of planets."], ["make_table"])
    outcome = await drive_run(make_agent(llm, ToolRegistry([CalculatorTool(), TableTool()])),
                              "Tabelle der Planeten, bitte", emit=lambda e: None)
    assert [s.tool for s in outcome.result.steps] == ["make_table"]
    assert len(llm.requests) == 2  # the call, then the answer: no third loop turn
    assert "table" in outcome.answer


@pytest.mark.anyio
async def test_hosted_models_choose_freely_with_every_tool() -> None:
    llm = ScriptedLLM(["Hamlet is a tragedy."], tool_call=True)
    await drive_run(make_agent(llm, ToolRegistry([CalculatorTool(), TableTool()])),
                    "Write a plot summary of Hamlet", emit=lambda e: None)
    request = llm.requests[0]
    assert request.tool_choice in (None, "auto")
    assert [t["function"]["name"] for t in request.tools or []] == ["calculator", "make_table"]


def test_the_loop_holds_no_phrase_rules_and_no_product_tool_names() -> None:
    """SPEC §10: the engine knows no language and no product tool by name."""
    import desktop_app.core.agent as agent_package
    from desktop_app.core.tools import builtin

    names = set()
    for module in Path(builtin.__file__).parent.glob("*.py"):
        names |= set(re.findall(r'^\s+name = "([a-z_]+)"', module.read_text(), re.MULTILINE))
    assert {"calculator", "make_table", "note_create"} <= names
    folder = Path(inspect.getfile(agent_package)).parent
    for module in folder.glob("*.py"):
        code = "\n".join(line for line in module.read_text().splitlines()
                         if not line.lstrip().startswith("#"))
        code = re.sub(r'"""(.*?)"""', "", code, flags=re.DOTALL)  # docstrings may give examples
        for name in names:
            assert f'"{name}"' not in code, f"{module.name} names the tool {name}"
        assert not re.search(r"re\.compile\([^)]*\\b(?:make|save|then|translate)", code,
                             re.IGNORECASE), f"{module.name} matches English phrases"
