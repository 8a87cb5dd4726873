"""A direct answer streams while the loop generates it and is never generated twice;
after tools ran, synthesis writes the answer (SPEC §4, "no double generation")."""

from __future__ import annotations

import pytest
from agent_helpers import Recorder, echo_tool, registry

from desktop_app.core.agent import AnswerDelta, AnswerStart, Done, ErrorEvent, ReActAgent
from desktop_app.core.agent.runner import drive_run
from desktop_app.core.llm.testing import ScriptedLLM, tool_call_reply
from desktop_app.core.llm.types import ChatMessage

pytestmark = pytest.mark.anyio


def native(*replies: object) -> ScriptedLLM:
    return ScriptedLLM(list(replies), tool_call=True, chunk_size=3)


async def test_a_direct_answer_is_streamed_by_the_loop_call_and_not_generated_again() -> None:
    llm = native("A generator yields values lazily.")
    events = Recorder()
    outcome = await drive_run(ReActAgent(llm, registry()), "What is a generator?", emit=events)
    assert outcome.answer == "A generator yields values lazily."
    assert len(llm.requests) == 1 and llm.requests[0].kind == "stream"  # one generation
    deltas = events.of(AnswerDelta)
    assert len(deltas) > 3  # arrived in pieces, as generated
    kinds = events.kinds()
    # SPEC §8's order holds although the answer streamed while the loop's call ran.
    assert kinds[:4] == ["thinking:start:1", "thinking:done:1", "signal", "answer:start"]
    assert set(kinds[4:-2]) == {"answer:delta"} and kinds[-2:] == ["answer:done", "done"]
    assert kinds[-1] == "done" and len(events.of(AnswerStart)) == 1


async def test_after_tools_ran_synthesis_writes_the_answer() -> None:
    llm = native(tool_call_reply(("calculator", {"expression": "6*7"})),
                 "The answer is", "6 times 7 is 42.")
    events = Recorder()
    outcome = await drive_run(ReActAgent(llm, registry()), "6*7?", emit=events)
    assert outcome.answer == "6 times 7 is 42."
    assert len(llm.requests) == 3  # call, loop reply (not shown), synthesis
    synthesis = llm.requests[-1]
    assert synthesis.tools is None and "42" in " ".join(m.content for m in synthesis.messages)


async def test_a_preamble_then_a_tool_call_keeps_the_preamble_and_appends_the_answer() -> None:
    llm = native(tool_call_reply(("calculator", {"expression": "6*7"}), content="Let me compute."),
                 "done", "It is 42.")
    events = Recorder()
    outcome = await drive_run(ReActAgent(llm, registry()), "6*7?", emit=events)
    assert outcome.answer == "Let me compute.\n\nIt is 42."
    assert "".join(d.content for d in events.of(AnswerDelta)) == outcome.answer
    assert len(events.of(AnswerStart)) == 1


async def test_conversation_synthesis_continues_the_loop_without_tools() -> None:
    llm = native(tool_call_reply(("calculator", {"expression": "6*7"})), "x", "42.")
    agent = ReActAgent(llm, registry(), synthesis="conversation")
    await drive_run(agent, "6*7?", emit=Recorder())
    last = llm.requests[-1]
    assert last.tools is None
    roles = [m.role for m in last.messages]
    assert roles[:3] == ["system", "user", "assistant"] and "tool" in roles
    assert roles[-1] == "user" and "answer to my question" in last.messages[-1].content


async def test_shared_prefix_synthesis_repeats_the_loop_s_prompt_and_tools() -> None:
    """The style whose prompt a local model's KV cache already holds (all but the last turn)."""
    llm = native(tool_call_reply(("calculator", {"expression": "6*7"})), "x", "42.")
    agent = ReActAgent(llm, registry(), synthesis="shared_prefix")
    outcome = await drive_run(agent, "6*7?", emit=Recorder())
    assert outcome.answer == "42."
    loop, synthesis = llm.requests[-2], llm.requests[-1]
    assert synthesis.tools == loop.tools and synthesis.tools
    # "auto", not "none": a text-only grammar halved the local model's decoding speed.
    assert synthesis.tool_choice == "auto"
    # The loop's messages are a prefix of the synthesis prompt: only the last turn is new.
    shown = [(m.role, m.content) for m in synthesis.messages]
    assert shown[:2] == [(m.role, m.content) for m in loop.messages][:2]
    assert shown[-1][0] == "user" and "answer to my question" in shown[-1][1]


READ = ("read", {"text": "the minutes"})
PAGE = ("create_html_artifact", {"title": "Note", "body": "<p>hi</p>"})


@pytest.mark.parametrize(("calls", "capped"), [
    ([("calculator", {"expression": "6*7"})], True),  # computed a value: one sentence
    ([PAGE], True),  # made something: uncapped, the model copied what it made
    ([READ], False),  # read something: as long as it needs
    ([READ, PAGE], True),  # read, then made something of it
])
async def test_the_shared_prefix_answer_is_capped_unless_a_tool_read_something(
        calls: list[tuple[str, dict[str, str]]], capped: bool) -> None:
    llm = native(tool_call_reply(*calls), "x", "Done.")
    agent = ReActAgent(llm, registry(echo_tool("read")), synthesis="shared_prefix")
    await drive_run(agent, "Summarise the minutes, and what is 6*7?", emit=Recorder())
    instruction = llm.requests[-1].messages[-1].content
    assert ("in one sentence" in instruction) is capped
    # Uncapped, the question is quoted: "my question" alone was read as the chat's first.
    assert ("Summarise the minutes, and what is 6*7?" in instruction) is not capped
    # After something was made, what was done is asked for, not "the answer to my
    # question", which the bundled model answered by saying the request back.
    made = any(name == PAGE[0] for name, _ in calls)
    assert ("what you did" in instruction) is made
    assert ("answer to my question" in instruction) is not made


async def test_a_long_question_is_quoted_cut() -> None:
    question = "Summarise this log: " + "ERROR disk full " * 500
    llm = native(tool_call_reply(READ), "x", "Done.")
    agent = ReActAgent(llm, registry(echo_tool("read")), synthesis="shared_prefix")
    await drive_run(agent, question, emit=Recorder())
    instruction = llm.requests[-1].messages[-1].content
    assert question[:200] in instruction and len(instruction) < 1000


async def test_a_call_instead_of_a_shared_prefix_answer_falls_back_to_separate_synthesis() -> None:
    llm = native(tool_call_reply(("calculator", {"expression": "6*7"})), "x",
                 tool_call_reply(("calculator", {"expression": "6*7"})), "6 times 7 is 42.")
    events = Recorder()
    outcome = await drive_run(ReActAgent(llm, registry(), synthesis="shared_prefix"), "6*7?",
                              emit=events)
    assert outcome.answer == "6 times 7 is 42."
    assert "".join(d.content for d in events.of(AnswerDelta)) == "6 times 7 is 42."
    shared, separate = llm.requests[-2], llm.requests[-1]
    assert shared.tools and separate.tools is None
    assert separate.messages[0].content.startswith("You write the final answer")
    # The call offered instead of an answer was not run.
    assert outcome.result and len(outcome.result.steps) == 1


async def test_an_empty_answer_is_an_error_not_a_success() -> None:
    llm = native(ChatMessage.assistant("   "), "", "")
    events = Recorder()
    outcome = await drive_run(ReActAgent(llm, registry()), "hi", emit=events)
    done = events.of(Done)[0]
    assert outcome.error and done.error and "empty answer" in done.error
    assert events.of(ErrorEvent)
