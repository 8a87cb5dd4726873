"""A looping stream is stopped at the loop, in the synthesis and in a live answer."""

from __future__ import annotations

import pytest
from agent_helpers import Recorder

from desktop_app.core.agent import ReActAgent, drive_run
from desktop_app.core.agent.repetition import RepetitionGuard, repeated_tail
from desktop_app.core.llm.testing import ScriptedLLM, tool_call_reply
from desktop_app.core.tools.builtin.calculator import CalculatorTool


@pytest.mark.parametrize(("text", "unit"), [
    ("Here:\n" + "```markdown " * 20, "```markdown "),
    ("It is very " + "very " * 40, "very "),
    ("Done. " + "The answer is 42. " * 10, "The answer is 42. "),
])
def test_a_loop_is_found(text: str, unit: str) -> None:
    found = repeated_tail(text)
    assert found is not None and found[0] == unit


@pytest.mark.parametrize("text", [
    "| A | B | C | D | E | F | G |\n| --- | --- | --- | --- | --- | --- | --- |",  # no letter
    "2^100 = 1267650600228229401496703205376, and 1/3 = 0.333333333333333333333",
    "Mercury, Venus, Earth, Mars, Jupiter, Saturn, Uranus, Neptune",
    "ha ha ha ha ha",  # short: a person may write that
    "```markdown ```markdown ```markdown",  # 3 copies but under MIN_SPAN characters
    "Done.\n" + "The answer is 42.\n" * 12,  # whole lines: a chorus, a checklist
    "Chorus:\nLa la la, we sing along\n" * 6,
    "- [ ] check\n" * 12,
    "It was very, very, very, very good.",
    "An empty block:\n```\n```\nand another:\n```\n```\n",  # fences with words between
])
def test_ordinary_text_is_not_a_loop(text: str) -> None:
    assert repeated_tail(text) is None


def test_a_table_row_written_again_and_again_is_a_loop() -> None:
    """The held-out run met an answer that wrote one table row until the context was full."""
    text = "| Planet | Order |\n|---|---|\n" + "| Mercury | 1 |\n" * 40
    found = repeated_tail(text)
    assert found is not None and found[0].strip() == "| Mercury | 1 |"


def test_code_is_never_cut() -> None:
    """Inside a code block identical lines and runs are the program, not a loop."""
    guard = RepetitionGuard()
    code = "```python\n" + "x = x + 1; " * 40 + "\n```\nDone."
    shown = "".join(guard.feed(code[i:i + 7]) for i in range(0, len(code), 7))
    assert not guard.tripped and shown == code


def test_empty_code_fences_again_and_again_are_a_loop_inside_a_block_or_not() -> None:
    """Fresh phrasings, third set: an answer "The final answer is: ``` ``` ``` …" ran to the
    300 s limit; the fences hold no letter, and every second one opens a code block."""
    for tail in ("``` " * 60, "```\n" * 60):
        text = "The final answer is: " + tail
        guard = RepetitionGuard()
        shown = "".join(guard.feed(text[i:i + 4]) for i in range(0, len(text), 4))
        assert guard.tripped, repr(tail[:8])
        # Copies passed on before the loop was seen stay shown; the answer keeps one.
        assert shown.count("```") <= 4 and guard.text.count("```") <= 2


def test_code_with_its_fences_is_never_cut() -> None:
    code = ("```python\n" + "print('a')\n" * 30 + "```\n") * 3 + "Three blocks."
    guard = RepetitionGuard()
    shown = "".join(guard.feed(code[i:i + 5]) for i in range(0, len(code), 5))
    assert not guard.tripped and shown == code


def test_a_switched_off_guard_passes_everything() -> None:
    """Hosted models' answers are never cut (their decoding does not loop like that)."""
    guard = RepetitionGuard(enabled=False)
    text = "See the table below. " * 50
    assert guard.feed(text) == text and not guard.tripped


def test_the_guard_passes_text_until_the_loop_and_keeps_one_copy() -> None:
    guard = RepetitionGuard()
    shown = ""
    for delta in ["Here it is:\n", *["```markdown "] * 120]:
        shown += guard.feed(delta)
        if guard.tripped:
            break
    assert guard.tripped and guard.text == "Here it is:\n```markdown "
    assert shown.count("```markdown") < 20  # stopped within a few copies, not at 120



@pytest.mark.anyio
async def test_a_looping_synthesis_is_cut_at_the_loop() -> None:
    call = tool_call_reply(("calculator", {"expression": "6*7"}))
    looping = "The result is 42. " + "See the table below. " * 200
    llm = ScriptedLLM([call, "42", looping], tool_call=True)
    outcome = await drive_run(ReActAgent(llm, [CalculatorTool()], guard_repetition=True),
                              "What is 6*7?", emit=Recorder())
    assert outcome.answer.startswith("The result is 42. See the table below.")
    assert outcome.answer.count("See the table below.") < 20


@pytest.mark.anyio
async def test_a_looping_live_answer_is_cut_at_the_loop() -> None:
    llm = ScriptedLLM(["A generator yields values. " + "It is lazy. " * 100], tool_call=True)
    outcome = await drive_run(ReActAgent(llm, [CalculatorTool()], guard_repetition=True),
                              "Explain a Python generator.", emit=Recorder())
    assert outcome.answer.count("It is lazy.") < 20
    assert outcome.result.answer == outcome.answer.strip()  # recorded as it was shown


@pytest.mark.anyio
async def test_a_loop_found_in_a_later_large_delta_keeps_the_reply_whole() -> None:
    """The kept part of a late delta continues the reply (no paragraph break is put into
    it), and the reply's record holds the text shown."""
    intro = "A generator yields values lazily, one at a time. "  # 49 characters
    llm = ScriptedLLM([intro + "It is lazy. " * 40], tool_call=True, chunk_size=50)
    events = Recorder()
    outcome = await drive_run(ReActAgent(llm, [CalculatorTool()], guard_repetition=True),
                              "Explain a Python generator.", emit=events)
    assert "\n" not in outcome.answer
    assert outcome.answer.startswith(intro + "It is lazy.")
    assert outcome.result is not None and outcome.result.answer == outcome.answer.strip()


@pytest.mark.anyio
async def test_a_hosted_answer_that_repeats_is_never_cut() -> None:
    """Without the guard (hosted models) a repeated passage stays whole."""
    text = "Row. " * 60
    llm = ScriptedLLM([text], tool_call=True)
    outcome = await drive_run(ReActAgent(llm, [CalculatorTool()]), "Say row sixty times.",
                              emit=Recorder())
    assert outcome.answer.count("Row.") == 60
