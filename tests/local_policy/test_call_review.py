"""A call the small model chose is checked before it is made: made-up numbers, or
arguments a pure tool cannot take, turn the run into a plain answer."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from desktop_app.core.agent import drive_run
from desktop_app.core.agent.factory import make_agent
from desktop_app.core.llm.testing import tool_call_reply
from desktop_app.core.llm.types import ChatMessage, ToolCall
from desktop_app.core.local_policy.call_review import (
    dry_run,
    grounded,
    numbers_in,
    review_call,
)
from desktop_app.core.tools.base import ToolRegistry
from desktop_app.core.tools.builtin.calculator import CalculatorTool
from desktop_app.core.tools.builtin.reports import TableTool
from tests.local_policy.test_routing_policy import LocalFake

TODAY = date(2026, 12, 6)


def _said(text: str) -> list[ChatMessage]:
    return [ChatMessage.system("Numbers here do not count: 2 + 3"), ChatMessage.user(text)]


def test_numbers_are_read_with_either_separator() -> None:
    assert {1850.0, 1.85} <= numbers_in("23% of 1,850")
    assert {3.5, 35.0} <= numbers_in("3,5 km")
    assert {2026.0, 12.0, 6.0} <= numbers_in("2026-12-06")


@pytest.mark.parametrize(("request_text", "arguments", "expected"), [
    ("hi there", {"expression": "2 + 3"}, False),  # the system turn's 2 + 3 does not count
    ("Hallo, wie geht's?", {"expression": "2 + 3 * 4 / 2 - 1"}, False),
    ("whats 12 times 19", {"expression": "12*19"}, True),
    ("tip on a $86.40 bill at 18%?", {"expression": "86.40 * 0.18"}, True),
    ("Wie viel sind 3,5 Meilen in Kilometern?", {"value": 3.5, "from_unit": "mi",
                                                 "to_unit": "km"}, True),
    ("what time is it in Tokyo", {"timezone": "Asia/Tokyo"}, True),  # no numbers given
    ("days until christmas?", {"date": "today", "end_date": "2026-12-25"}, True),  # the year
    ("days until christmas?", {"date": "2023-04-15", "end_date": "2023-04-16"}, False),
])
def test_numbers_given_to_a_tool_must_come_from_somewhere(
        request_text: str, arguments: dict[str, object], expected: bool) -> None:
    assert grounded(arguments, _said(request_text)[1:], TODAY) is expected


@pytest.mark.anyio
async def test_a_pure_tool_that_cannot_take_the_arguments_rejects_the_call() -> None:
    call = ToolCall(id="c", name="calculator", arguments='{"expression": "Australia"}')
    assert await review_call(call, CalculatorTool(), _said("capital of Australia?"), TODAY)
    ok = ToolCall(id="c", name="calculator", arguments='{"expression": "sqrt(7225)"}')
    assert await review_call(ok, CalculatorTool(), _said("sqrt of 7225"), TODAY) is None


@pytest.mark.anyio
async def test_a_slip_on_the_requests_own_numbers_passes_review_and_fails_its_dry_run() -> None:
    """Not answered in words as a made-up call is: the routing policy has the model choose
    again among the other tools (``dry_run`` tells it the call fails)."""
    slip = ToolCall(id="c", name="calculator", arguments='{"expression": "5 miles"}')
    assert await review_call(slip, CalculatorTool(), _said("5 miles in km?"), TODAY) is None
    assert await dry_run(slip, CalculatorTool())
    assert await dry_run(slip.model_copy(update={"arguments": '{"expression": "5 * 1.609"}'}),
                         CalculatorTool()) is None


@pytest.mark.anyio
async def test_tools_that_make_things_are_not_second_guessed() -> None:
    """Numbers in a table may come from the model's knowledge (planet order, years)."""
    call = ToolCall(id="c", name="make_table",
                    arguments='{"title": "Planets", "rows": [["Mercury", "1"]]}')
    assert await review_call(call, TableTool(), _said("planets table please"), TODAY) is None


@pytest.mark.anyio
async def test_a_greeting_sent_to_the_calculator_is_answered_in_words() -> None:
    llm = LocalFake([tool_call_reply(("calculator", {"expression": "2 + 3"})),
                     "Hello! I'm fine, thanks."], ["calculator"])
    outcome = await drive_run(make_agent(llm, ToolRegistry([CalculatorTool(), TableTool()])),
                              "hi there, how are you?", emit=lambda e: None)
    assert outcome.result.steps == []  # the made-up sum was never computed
    assert outcome.answer.startswith("Hello!")
    assert not llm.requests[-1].tools  # answered as plain chat


@pytest.mark.anyio
async def test_an_accepted_call_is_the_models_first_turn_and_not_generated_twice() -> None:
    llm = LocalFake([tool_call_reply(("calculator", {"expression": "12*19"})), "Done.",
                     "12 times 19 is 228."], ["calculator"])
    outcome = await drive_run(make_agent(llm, ToolRegistry([CalculatorTool()])),
                              "whats 12 times 19", emit=lambda e: None)
    assert [s.tool for s in outcome.result.steps] == ["calculator"]
    assert outcome.result.steps[0].error is None
    forced = [r for r in llm.requests if isinstance(r.tool_choice, dict)]
    assert len(forced) == 1 and llm.requests[0] is forced[0]  # the call was asked for once
    assert "228" in outcome.answer


@pytest.mark.anyio
async def test_a_workspace_file_the_request_names_is_read_before_the_first_turn(
        tmp_path: Path) -> None:
    from desktop_app.core.tools.builtin.files import file_tools
    from desktop_app.core.tools.sandbox import Workspace

    (tmp_path / "expenses.csv").write_text("item,amount\nrent,900\nfood,250\n")
    (tmp_path / "notes").write_text("a file without an extension is not matched by its name")
    llm = LocalFake(["The total is 1150."], [])  # no choice is asked for
    tools = ToolRegistry([CalculatorTool(), *file_tools(Workspace(tmp_path))])
    outcome = await drive_run(make_agent(llm, tools), "Was ist die Summe in expenses.csv?",
                              emit=lambda e: None)
    assert [(s.tool, s.args) for s in outcome.result.steps] == [
        ("read_file", {"path": "expenses.csv"})]
    assert "rent,900" in (llm.requests[0].messages[-1].content or "")
    assert llm.offered == []
    plain = LocalFake(["Notes are…"], [None])
    await drive_run(make_agent(plain, tools), "how should I organise my notes and files?",
                    emit=lambda e: None)
    assert plain.offered  # nothing was named exactly: the model chose as always


@pytest.mark.anyio
async def test_the_first_call_is_bounded_and_an_unfinished_one_is_answered_in_words() -> None:
    from desktop_app.core.local_policy.routing import FIRST_CALL_MAX_TOKENS

    llm = LocalFake(['{"name": "make_table", "arguments": {"rows": [["a", "1"], ["a", "1"',
                     "Here is a short answer."], ["make_table"])
    outcome = await drive_run(make_agent(llm, ToolRegistry([CalculatorTool(), TableTool()])),
                              "planets table, and which is largest?", emit=lambda e: None)
    assert llm.requests[0].max_tokens == FIRST_CALL_MAX_TOKENS
    assert outcome.result.steps == [] and outcome.answer == "Here is a short answer."


def test_a_call_chosen_again_needs_most_of_its_numbers_from_the_user() -> None:
    """From a made-up call, a runaway sum that holds one of the user's numbers is not
    grounded; a sum of the user's numbers with one factor worked out is."""
    asked = [ChatMessage.user("my 10 yr old asks why the sky is blue")]
    runaway = {"expression": "2 * 3 - 4 / 2 + 5 * 2 / 2 + 10 * 2 / 2"}
    assert grounded(runaway, asked, None)
    assert not grounded(runaway, asked, None, most=True)
    tip = [ChatMessage.user("dinner was 86.40, we leave 15% tip, total?")]
    assert grounded({"expression": "86.40 * 1.15"}, tip, None, most=True)
    today = date(2026, 12, 7)
    on_today = {"date": "2026-12-07", "days": 1}
    assert grounded(on_today, [ChatMessage.user("a limerick")], today)
    assert not grounded(on_today, [ChatMessage.user("a limerick")], None, most=True)
