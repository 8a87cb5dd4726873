"""An optional argument nothing in the conversation supports is left out of the small
model's call: "what day is it" is answered in the user's own time zone, not in the one the
model made up; a place the user named, in any of the four languages, is kept."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from desktop_app.core.agent import drive_run
from desktop_app.core.agent.factory import make_agent
from desktop_app.core.llm.testing import tool_call_reply
from desktop_app.core.tools.base import ToolRegistry
from desktop_app.core.tools.builtin.clock import ClockTool
from desktop_app.core.tools.builtin.place_names import zones_named_in
from tests.local_policy.test_routing_policy import LocalFake

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize(("text", "zone"), [
    ("I need to call a colleague in Osaka", "Asia/Tokyo"),
    ("Wie spät ist es gerade in Tokio?", "Asia/Tokyo"),
    ("¿Qué hora es ahora mismo en Nueva York?", "America/New_York"),
    ("time in nyc now?", "America/New_York"),
    ("Il est quelle heure à Montréal ?", "America/Toronto"),
    ("Current time in Japan?", "Asia/Tokyo"),
])
def test_the_places_a_text_names_are_read_in_any_of_the_languages(text: str, zone: str) -> None:
    assert zone in zones_named_in(text)


@pytest.mark.parametrize("text", [
    "what day of the wk is it",
    # Small towns are called Holiday (Florida) and Time (Norway); codes count only in
    # capitals ("DAY" is Dayton's airport).
    "I've completely lost track of time on holiday. Which day of the week is it today?",
    "the day of the week",
])
def test_everyday_words_name_no_place(text: str) -> None:
    assert zones_named_in(text) == set()


@pytest.mark.parametrize(("zone", "said", "unfounded"), [
    ("America/New_York", "what day of the wk is it", ["timezone"]),
    ("Europe/London", "How do I ask 'what time is it?' in Italian?", ["timezone"]),
    ("America/New_York", "time in nyc now?", []),
    ("Asia/Tokyo", "I need to call a colleague in Osaka", []),
    ("Tokyo", "Wie spät ist es gerade in Tokio?", []),
    ("Australia/Sydney", "Quelle heure est-il à Sydney en ce moment ?", []),
    ("local", "what time is it", []),
    ("Atlantis", "what time is it in Atlantis", []),  # the tool reports what it cannot read
    # An old name of the zone a named city is in: the same clock.
    ("Asia/Calcutta", "what time is it in Mumbai?", []),
    ("US/Pacific", "time in San Francisco?", []),
])
async def test_a_time_zone_the_conversation_does_not_name_is_unfounded(
        zone: str, said: str, unfounded: list[str]) -> None:
    assert await ClockTool().unfounded({"timezone": zone}, said) == unfounded


def _clock() -> ClockTool:
    # 04:39 UTC on a Monday: still Sunday in New York.
    return ClockTool(now=lambda: datetime(2026, 12, 7, 4, 39, tzinfo=UTC))


async def test_a_made_up_time_zone_is_left_out_of_the_call() -> None:
    llm = LocalFake([tool_call_reply(("current_time", {"timezone": "America/New_York"})),
                     "It is Monday."], ["current_time"])
    outcome = await drive_run(make_agent(llm, ToolRegistry([_clock()])),
                              "what day of the wk is it", emit=lambda e: None)
    [step] = outcome.result.steps
    assert step.args == {}  # the user's own time zone, whatever this machine's is
    assert "New_York" not in step.observation


async def test_a_place_the_user_named_is_kept() -> None:
    llm = LocalFake([tool_call_reply(("current_time", {"timezone": "Asia/Tokyo"})),
                     "It is 13:39 there."], ["current_time"])
    outcome = await drive_run(make_agent(llm, ToolRegistry([_clock()])),
                              "I need to call a colleague in Osaka, what time is it there?",
                              emit=lambda e: None)
    [step] = outcome.result.steps
    assert step.args == {"timezone": "Asia/Tokyo"}
    assert "13:39" in step.observation


@pytest.mark.parametrize(("zone", "said"), [
    ("America/New_York", "anything new today? what day is it"),
    ("America/Los_Angeles", "¿Qué día es hoy? Los lunes trabajo."),
    ("Asia/Tokyo", "what time is it? I'm flying to Asia next year"),
])
async def test_a_common_word_of_a_zone_name_does_not_found_it(zone: str, said: str) -> None:
    assert await ClockTool().unfounded({"timezone": zone}, said) == ["timezone"]


@pytest.mark.parametrize(("said", "first", "then", "made"), [
    # Seen on the bundled model: with its zone taken out of the first call, it asked again
    # for "UTC" on its next turn; without that zone the call repeats the first, and the
    # loop ends there instead of showing the user two clocks.
    ("what day of the wk is it", "America/New_York", "UTC", [{}]),
    ("time in Berlin and in Singapore?", "Europe/Berlin", "Asia/Singapore",
     [{"timezone": "Europe/Berlin"}, {"timezone": "Asia/Singapore"}]),
])
async def test_the_models_later_calls_are_revised_as_its_first(
        said: str, first: str, then: str, made: list[dict[str, str]]) -> None:
    llm = LocalFake([tool_call_reply(("current_time", {"timezone": first})),
                     tool_call_reply(("current_time", {"timezone": then})), "Done."],
                    ["current_time"])
    outcome = await drive_run(make_agent(llm, ToolRegistry([_clock()])), said,
                              emit=lambda e: None)
    assert [step.args for step in outcome.result.steps] == made
