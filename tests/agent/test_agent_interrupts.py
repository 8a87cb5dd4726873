"""Interrupts: drain timing per mode, merging, pinning, suppressed answers, none lost."""

from __future__ import annotations

import threading

import pytest
from agent_helpers import Recorder, registry

from desktop_app.core.agent import Inject, InterruptQueue, InterruptQueues, ReActAgent, drive_run
from desktop_app.core.agent.interrupts import INTERRUPT_TAG, interrupt_message
from desktop_app.core.llm.testing import (
    Request,
    ScriptedLLM,
    json_action,
    json_final,
    tool_call_reply,
)
from desktop_app.core.llm.types import ChatMessage

pytestmark = pytest.mark.anyio


def queue_then(queue: InterruptQueue, texts: list[str], reply: object):  # type: ignore[no-untyped-def]
    """A scripted reply that queues interrupts while the model is 'thinking'."""
    def produce(_: Request) -> object:
        for text in texts:
            queue.put(text)
        return reply
    return produce


def test_queue_put_drain_peek_and_blank_messages() -> None:
    queue = InterruptQueue()
    queue.put("  first ")
    queue.put("   ")
    queue.put("second")
    assert queue.peek() == ["first", "second"] and queue.pending == 2
    assert queue.drain() == ["first", "second"]
    assert queue.drain() == [] and queue.pending == 0


def test_queue_is_safe_to_fill_from_other_threads() -> None:
    queue = InterruptQueue()
    threads = [threading.Thread(target=lambda i=i: [queue.put(f"{i}-{n}") for n in range(200)])
               for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(queue.drain()) == 800


def test_one_queue_per_conversation() -> None:
    queues = InterruptQueues()
    assert queues.get("a") is queues.get("a") and queues.get("a") is not queues.get("b")


def test_several_interrupts_merge_into_one_pinned_message() -> None:
    message = interrupt_message(["also in euros", "and round it"])
    assert message.role == "user" and message.pinned
    assert message.content.startswith(INTERRUPT_TAG)
    assert "1. also in euros\n2. and round it" in message.content


async def test_json_mode_drains_after_the_assistant_message_and_suppresses_final() -> None:
    queue = InterruptQueue()
    llm = ScriptedLLM([queue_then(queue, ["in Berlin please", "and Tokyo"], json_final("12:00")),
                       json_final("Berlin 12:00, Tokyo 20:00")])
    events = Recorder()
    result = await ReActAgent(llm, registry()).run("what time is it?", interrupt_queue=queue,
                                                    on_event=events)
    # The first final answer was suppressed; the loop went on with the interrupt.
    assert result.answer == "Berlin 12:00, Tokyo 20:00" and result.iterations == 2
    second = llm.requests[1].messages
    assert [m.role for m in second[-2:]] == ["assistant", "user"]
    merged = second[-1]
    assert merged.pinned and merged.content.count(INTERRUPT_TAG) == 1
    assert "in Berlin please" in merged.content and "and Tokyo" in merged.content
    assert [e.content for e in events.of(Inject)] == ["in Berlin please", "and Tokyo"]
    assert result.interrupts == ["in Berlin please", "and Tokyo"]


async def test_json_mode_interrupt_during_tool_call_follows_the_observation() -> None:
    queue = InterruptQueue()
    llm = ScriptedLLM([queue_then(queue, ["use 3 decimals"],
                                  json_action("calculator", {"expression": "1/3"})),
                       json_final("0.333")])
    await ReActAgent(llm, registry()).run("1/3", interrupt_queue=queue)
    tail = llm.requests[1].messages[-3:]
    assert [m.role for m in tail] == ["assistant", "user", "user"]
    assert tail[1].content.startswith("Result of calculator")
    assert tail[2].pinned and "use 3 decimals" in tail[2].content


async def test_native_mode_interrupts_land_after_all_tool_messages() -> None:
    queue = InterruptQueue()
    llm = ScriptedLLM([queue_then(queue, ["also 3*3"],
                                  tool_call_reply(("calculator", {"expression": "1+1"}),
                                                  ("calculator", {"expression": "2+2"}))),
                       ChatMessage.assistant("2, 4 and 9")], tool_call=True)
    result = await ReActAgent(llm, registry()).run("sums", interrupt_queue=queue)
    sent = llm.requests[1].messages
    assert [m.role for m in sent[-4:]] == ["assistant", "tool", "tool", "user"]
    assert sent[-1].pinned and "also 3*3" in sent[-1].content
    assert result.messages[-2].pinned  # kept in the history, before the answer


async def test_native_mode_pending_answer_is_suppressed_by_interrupt() -> None:
    queue = InterruptQueue()
    llm = ScriptedLLM([queue_then(queue, ["wait, in French"], ChatMessage.assistant("Hello")),
                       ChatMessage.assistant("Bonjour")], tool_call=True)
    result = await ReActAgent(llm, registry()).run("greet", interrupt_queue=queue)
    assert result.answer == "Bonjour" and result.iterations == 2
    assert llm.requests[1].messages[-1].content.endswith("wait, in French")


@pytest.mark.parametrize("native", [False, True])
async def test_interrupt_on_the_last_iteration_is_answered_in_synthesis(native: bool) -> None:
    queue = InterruptQueue()
    first = (tool_call_reply(("calculator", {"expression": "2+2"})) if native
             else json_action("calculator", {"expression": "2+2"}))
    llm = ScriptedLLM([queue_then(queue, ["and what is 3+3?"], first), "4, and 3+3 is 6"],
                      tool_call=native)
    outcome = await drive_run(ReActAgent(llm, registry(), max_iterations=1), "2+2?",
                              emit=Recorder(), interrupt_queue=queue)
    assert outcome.result is not None and outcome.result.interrupts == ["and what is 3+3?"]
    synthesis = llm.requests[-1]
    assert synthesis.kind == "stream" and "and what is 3+3?" in synthesis.messages[-1].content
    assert queue.pending == 0


async def test_interrupt_after_the_loop_but_before_synthesis_is_answered() -> None:
    events = Recorder()

    class LateQueue(InterruptQueue):
        """Simulates a message arriving just after the loop's last drain."""
        drains = 0

        def drain(self) -> list[str]:
            self.drains += 1
            if self.drains == 2:  # the driver's drain after run()
                self.put("one more: 5+5?")
            return super().drain()

    late = LateQueue()
    llm = ScriptedLLM([json_final("4"), "4; and 5+5 is 10"])
    outcome = await drive_run(ReActAgent(llm, registry()), "2+2?", emit=events,
                              interrupt_queue=late)
    assert outcome.result is not None and "one more: 5+5?" in outcome.result.interrupts
    assert "one more: 5+5?" in llm.requests[-1].messages[-1].content
    kinds = events.kinds()
    assert kinds.index("inject") < kinds.index("answer:start") < kinds.index("done")
    assert outcome.result.messages[-1].pinned


async def test_interrupt_arriving_after_the_run_stays_for_the_next_turn() -> None:
    queue = InterruptQueue()
    llm = ScriptedLLM([json_final("4"), "Four."])
    events = Recorder()

    def on_event(event: object) -> None:
        events(event)  # type: ignore[arg-type]
        if type(event).__name__ == "Done":
            queue.put("next question")

    await drive_run(ReActAgent(llm, registry()), "2+2?", emit=on_event, interrupt_queue=queue)
    assert queue.drain() == ["next question"]


@pytest.mark.parametrize("native", [False, True])
async def test_answer_suppressed_on_the_last_iteration_is_kept_as_draft(native: bool) -> None:
    queue = InterruptQueue()
    reply = ChatMessage.assistant("It is 4.") if native else json_final("It is 4.")
    llm = ScriptedLLM([queue_then(queue, ["and in words?"], reply), "4 — four."],
                      tool_call=native)
    outcome = await drive_run(ReActAgent(llm, registry(), max_iterations=1), "2+2?",
                              emit=Recorder(), interrupt_queue=queue)
    assert outcome.result is not None
    assert outcome.result.answer == "It is 4." and outcome.result.stop_reason == "final_answer"
    synthesis = llm.requests[-1].messages[-1].content
    assert "and in words?" in synthesis and "Draft answer:\nIt is 4." in synthesis
    assert outcome.result.messages[-1].pinned  # the interrupt is in the history
