"""RunRecorder: a real ReActAgent run (scripted LLM, real tools) recorded from its events."""

from __future__ import annotations

import asyncio
from pathlib import Path

from desktop_app.core.agent.interrupts import InterruptQueue
from desktop_app.core.agent.react import ReActAgent
from desktop_app.core.agent.runner import drive_run
from desktop_app.core.llm.testing import ScriptedLLM, json_action, json_final
from desktop_app.core.store.async_store import AsyncStore
from desktop_app.core.store.conversation_store import ConversationStore
from desktop_app.core.store.run_recorder import RunRecorder
from desktop_app.core.tools.base import Artifact, FunctionTool, ToolResult

SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}


def test_a_whole_run_is_recorded(db_path: Path) -> None:
    async def forecast(city: str) -> ToolResult:
        return ToolResult(text=f"{city}: 21 C", artifacts=[
            Artifact(name="forecast.html", mime_type="text/html", content="<b>21 C</b>")])

    llm = ScriptedLLM([json_action("forecast", {"city": "Rome"}, reasoning="need data"),
                       json_final("21 C in Rome"),
                       "It is **21 °C** in Rome today."], model_id="scripted")
    agent = ReActAgent(llm, [FunctionTool("forecast", "weather", SCHEMA, forecast)])

    async def main() -> str:
        async with await AsyncStore.open(db_path) as store:
            conv = await store.create_conversation(model="scripted")
            recorder = RunRecorder(store, conv.id, model="scripted", flush_interval=0.05)
            await recorder.begin("Weather in Rome?")
            # The question is durable before the engine does anything.
            assert [m.content for m in await store.list_messages(conv.id)] == \
                ["Weather in Rome?", ""]
            outcome = await drive_run(agent, "Weather in Rome?", emit=recorder)
            assert recorder.answer is not None
            assert recorder.answer.content == outcome.answer
            return conv.id

    conv_id = asyncio.run(main())
    with ConversationStore(db_path) as store:
        detail = store.load_conversation(conv_id)
        user, answer = detail.messages
        assert (user.role, user.content) == ("user", "Weather in Rome?")
        assert (answer.status, answer.content, answer.model) == \
            ("complete", "It is **21 °C** in Rome today.", "scripted")
        assert answer.reasoning and "need data" in answer.reasoning
        assert answer.completion_tokens and answer.prompt_tokens
        assert answer.timings.elapsed is not None
        # What the live footer said is what a reopened conversation says.
        assert answer.timings.iterations == 2
        assert answer.timings.tokens_per_second is not None  # the synthesis streamed
        assert answer.timings.prompt_tokens_per_second is not None
        [step] = answer.steps
        assert (step.tool, step.args, step.error) == ("forecast", {"city": "Rome"}, None)
        assert step.observation.startswith("Rome: 21 C")  # + the engine's artifact summary
        assert [(a.name, a.step_id) for a in detail.artifacts] == [("forecast.html", step.id)]


def test_interrupt_during_a_run_is_stored_delivered_and_ordered(db_path: Path) -> None:
    queue = InterruptQueue()
    holder: dict[str, RunRecorder] = {}

    async def slow_search(city: str) -> str:
        # The user types a follow-up while the tool runs: the UI stores it, then queues it.
        await holder["r"].interrupt("and in Paris?")
        queue.put("and in Paris?")
        return f"{city}: 21 C"

    llm = ScriptedLLM([json_action("search", {"city": "Rome"}), json_final("Rome only"),
                       json_final("Rome 21, Paris 18"), "Rome: 21 °C. Paris: 18 °C."])
    agent = ReActAgent(llm, [FunctionTool("search", "weather", SCHEMA, slow_search)])

    async def main() -> str:
        async with await AsyncStore.open(db_path) as store:
            conv = await store.create_conversation()
            holder["r"] = RunRecorder(store, conv.id)
            await holder["r"].begin("Weather in Rome?")
            await drive_run(agent, "Weather in Rome?", emit=holder["r"], interrupt_queue=queue)
            return conv.id

    conv_id = asyncio.run(main())
    with ConversationStore(db_path) as store:
        [interrupt] = store.list_interrupts(conv_id)
        assert interrupt.status == "delivered"
        # Stored order is chronological (the interrupt came after the answer row was made)...
        assert [m.content for m in store.list_messages(conv_id)][-1] == "and in Paris?"
        # ...but the history puts it with the run that answered it.
        history = store.load_history(conv_id)
        assert [(m.role, m.content, m.pinned) for m in history] == [
            ("user", "Weather in Rome?", False), ("user", "and in Paris?", True),
            ("assistant", "Rome: 21 °C. Paris: 18 °C.", False)]


def test_cancelled_run_keeps_its_question_and_is_interrupted(db_path: Path) -> None:
    tool_running = asyncio.Event()

    async def hang(city: str) -> str:
        tool_running.set()
        await asyncio.sleep(30)
        return "never"

    llm = ScriptedLLM([json_action("wait", {"city": "Rome"})])
    agent = ReActAgent(llm, [FunctionTool("wait", "slow", SCHEMA, hang)])

    async def main() -> str:
        async with await AsyncStore.open(db_path) as store:
            conv = await store.create_conversation()
            recorder = RunRecorder(store, conv.id)
            await recorder.begin("Take your time")
            task = asyncio.create_task(drive_run(agent, "Take your time", emit=recorder))
            # Stop once the tool runs, not after a fixed time: a loaded CI machine can be slower.
            await asyncio.wait_for(tool_running.wait(), 30)
            task.cancel()  # Stop
            try:
                await task
            except asyncio.CancelledError:
                pass
            return conv.id

    conv_id = asyncio.run(main())
    with ConversationStore(db_path) as store:
        user, answer = store.list_messages(conv_id, with_steps=True)
        assert user.content == "Take your time"
        assert answer.status == "interrupted"
        assert [(s.tool, s.observation) for s in answer.steps] == [("wait", "")]
