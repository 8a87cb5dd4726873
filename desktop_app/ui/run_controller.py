"""Runs as the window sees them: start, interrupt, stop, regenerate; events out as signals.

A run is an asyncio task on the qasync loop (the Qt thread). Model work never happens
here: llama.cpp runs on the adapter's worker thread and the bundled model is assembled on
a thread of its own; this code only awaits them. Every event is re-emitted as the Qt
signal ``event(conversation_id, event)`` and persisted to the store through
:class:`~desktop_app.core.store.run_recorder.RunRecorder`, so a crash loses at most the
last second of a streaming answer.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, Signal

from desktop_app.core.llm.types import Usage
from desktop_app.ui.app_context import AppContext
from desktop_app.ui.model_loading import ModelLoading

if TYPE_CHECKING:  # the engine is imported on the first run, not when the window opens
    from desktop_app.core.agent.events import Done, Event
    from desktop_app.core.agent.interrupts import InterruptQueue
    from desktop_app.core.llm.base import LLM
    from desktop_app.core.store.run_recorder import RunRecorder
    from desktop_app.core.tools.confirmation import Confirmer


def _interrupt_queue() -> InterruptQueue:
    from desktop_app.core.agent.interrupts import InterruptQueue

    return InterruptQueue()


@dataclass
class ActiveRun:
    """The run that is working now."""

    conversation_id: str
    query: str
    mode: str
    model: str
    user_message_id: int = 0
    assistant_message_id: int = 0
    queue: InterruptQueue = field(default_factory=lambda: _interrupt_queue())
    events: list[Event] = field(default_factory=list)
    task: asyncio.Task[Any] | None = None
    confirmer: Confirmer | None = None
    dag: Any = None
    done: Done | None = None
    recorder: RunRecorder | None = None
    save_errors: list[str] = field(default_factory=list)
    #: ``time.perf_counter()`` at Send: the footer's times count from here (a model that
    #: loads first is part of the wait).
    sent_at: float = field(default_factory=time.perf_counter)


class RunController(ModelLoading, QObject):
    """Starts one run at a time and reports everything it does as signals."""

    run_event = Signal(str, object)       # conversation id, core event (not "event": QObject.event)
    run_started = Signal(str, object)     # conversation id, ActiveRun
    run_finished = Signal(str, object)    # conversation id, Done
    interrupt_added = Signal(str, str)    # conversation id, text
    model_status = Signal(str)            # "" when idle
    model_progress = Signal(int, int)     # done, total (total 0: busy, no percentage)
    save_failed = Signal(str, str)        # conversation id, what went wrong
    share_decided = Signal(str, str, bool)  # conversation id, host, may local content go

    def __init__(self, ctx: AppContext, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.ctx = ctx
        self.active: ActiveRun | None = None
        #: Extra ReActAgent options (tests: small max_iterations; benchmarks: max_tokens).
        self.agent_options: dict[str, Any] = {}
        self._loading: dict[str, asyncio.Task[LLM]] = {}

    def is_running(self, conversation_id: str | None = None) -> bool:
        run = self.active
        return run is not None and (conversation_id is None or run.conversation_id == conversation_id)

    # --- runs -----------------------------------------------------------------------------------
    def start(self, conversation_id: str, text: str, *, model: str | None = None,
              mode: str = "react", reuse_user_message: int | None = None) -> ActiveRun:
        """Start a run (as a task) and return it; raises if one is already working."""
        if self.active is not None:
            raise RuntimeError("A run is already working; send an interrupt or stop it first.")
        name = self.ctx.registry.resolve(model)
        run = ActiveRun(conversation_id=conversation_id, query=text, mode=mode, model=name)
        self.active = run
        run.task = asyncio.ensure_future(self._drive(run, reuse_user_message))
        return run

    async def send(self, conversation_id: str, text: str, **options: Any) -> Done | None:
        """Start a run and wait for it to end; returns its ``Done`` event."""
        run = self.start(conversation_id, text, **options)
        assert run.task is not None
        try:
            await run.task
        except asyncio.CancelledError:
            pass
        return run.done

    def _emit(self, run: ActiveRun, event: Event) -> None:
        run.events.append(event)
        if event.channel == "done":
            run.done = event  # type: ignore[assignment]
        self.run_event.emit(run.conversation_id, event)

    async def _emit_and_record(self, run: ActiveRun, event: Event) -> None:
        """Show the event, then make it durable (the store's RunRecorder)."""
        from desktop_app.core.errors import DesktopAppError

        self._emit(run, event)
        if run.recorder is None:
            return
        try:
            await run.recorder(event)
        except DesktopAppError as exc:  # the run goes on; the user learns it was not saved
            if not run.save_errors:
                run.save_errors.append(str(exc))

    async def _drive(self, run: ActiveRun, reuse_user_message: int | None) -> None:
        from desktop_app.core import egress
        from desktop_app.core.agent.events import Done, ErrorEvent
        from desktop_app.core.store.history import to_chat_messages
        from desktop_app.core.store.run_recorder import RunRecorder
        from desktop_app.core.tools.confirmation import Confirmer

        store = self.ctx.store
        started = run.sent_at

        async def emit(event: Event) -> None:
            await self._emit_and_record(run, event)

        try:
            recorder = RunRecorder(store, run.conversation_id, model=run.model)
            messages = await store.list_messages(run.conversation_id)
            if reuse_user_message is not None:  # a follow-up turn: its question is stored
                messages = [m for m in messages if m.id < reuse_user_message]
                recorder.user_message = await store.get_message(reuse_user_message)
                recorder.writer.started_at = time.monotonic()
                await recorder.writer.start()
            else:
                await recorder.begin(run.query)
            assert recorder.user_message is not None and recorder.writer.message_id is not None
            run.recorder = recorder
            run.user_message_id = recorder.user_message.id
            run.assistant_message_id = recorder.writer.message_id
            # What this run sends off the computer is recorded against its answer (this
            # task's context only: runs of other chats are separate tasks).
            egress.serve_in_this_task(run.conversation_id, str(run.assistant_message_id))
            history = to_chat_messages(messages)
            self.run_started.emit(run.conversation_id, run)
            llm = await self.ensure_llm(run.model)
            from desktop_app.core.assistants import (
                ChatOptions,
                agent_options,
                find_assistant,
                tools_for,
            )

            conversation = await store.get_conversation(run.conversation_id)
            assistant = find_assistant(self.ctx.settings, conversation.assistant)
            try:
                chat_options = ChatOptions.model_validate(conversation.chat_options)
            except ValueError:  # hand-edited nonsense: the assistant's own values
                chat_options = ChatOptions()
            tools = tools_for(assistant, self.ctx.tools())
            if chat_options.documents:
                from desktop_app.core.tools.builtin.search_documents import with_documents

                tools = with_documents(tools, self.ctx.documents(), chat_options.documents)
            preset = agent_options(assistant, chat_options, llm)
            run.confirmer = Confirmer(emit, settings=self.ctx.settings)
            share = self._share_gates(run, chat_options.share_decisions())
            history = await self._shareable_history(run.conversation_id, messages, history,
                                                    tools, llm, share)
            if run.mode == "dag":
                from desktop_app.core.dag.runner import DagRunner

                # Every step asks before tools that change things, like a ReAct run does,
                # and follow-ups typed meanwhile reach the plan at its next phase boundary.
                # A plan's steps keep their own prompts; the assistant's temperature holds.
                step_options = {key: preset[key] for key in ("temperature",) if key in preset}
                run.dag = DagRunner(self.ctx.registry, tools, model=run.model,
                                    agent_options={
                                        "confirm": run.confirmer, "share": share,
                                        "tool_timeout": self.ctx.settings.tools.timeout_seconds,
                                        **step_options},
                                    instructions=preset.get("system_prompt"))
                await run.dag.run(run.query, history=history, interrupt_queue=run.queue,
                                  on_event=emit, started=run.sent_at)
            else:
                from desktop_app.core.agent.factory import make_agent
                from desktop_app.core.agent.runner import drive_run

                options = {"tool_timeout": self.ctx.settings.tools.timeout_seconds,
                           **preset, **self.agent_options}
                agent = make_agent(llm, tools, confirm=run.confirmer, share=share, **options)
                await drive_run(agent, run.query, emit=emit, history=history,
                                interrupt_queue=run.queue, started=run.sent_at)
        except asyncio.CancelledError:
            if run.done is None:  # stopped before the engine started (e.g. while loading)
                await emit(Done(answer="", iterations=0, usage=Usage(), model=run.model,
                                elapsed=time.perf_counter() - started, cancelled=True))
        except Exception as exc:  # noqa: BLE001 - every failure must reach the user
            if run.done is None:
                from desktop_app.core.agent.runner import error_message

                message = error_message(exc)
                await emit(ErrorEvent(message=message, kind=type(exc).__name__))
                await emit(Done(answer="", iterations=0, usage=Usage(), model=run.model,
                                elapsed=time.perf_counter() - started, error=message))
        finally:
            if run.confirmer is not None:
                run.confirmer.deny_all()
            if run.recorder is not None and run.recorder.answer is None:
                try:
                    await run.recorder.abort("interrupted")
                except Exception as exc:  # noqa: BLE001
                    run.save_errors.append(str(exc))
            if run.save_errors:
                self.save_failed.emit(run.conversation_id, run.save_errors[0])
            self.active = None
            self.run_finished.emit(run.conversation_id, run.done)
        await self._follow_up(run)

    def _share_gates(self, run: ActiveRun, decided: dict[str, bool]) -> Any:
        """The chat's consents before the user's files or notes go to a model on another
        computer: asked once per host, kept with the conversation."""
        from desktop_app.core.tools.sharing import ShareGates

        confirmer = run.confirmer
        assert confirmer is not None
        return ShareGates(confirmer.ask_share, decided=decided,
                          on_decided=lambda host, allowed: self._remember_share(
                              run.conversation_id, host, allowed))

    async def _shareable_history(self, conversation_id: str, messages: list[Any],
                                 history: list[Any], tools: Any, llm: LLM,
                                 share: Any) -> list[Any]:
        """The earlier turns this run may send. A chat that goes on with a model on another
        computer after answers that used the user's files or notes (on a local model, say)
        would send those answers along: the user is asked as before a tool reads their
        content; kept local, those answers stay out of what is sent."""
        from desktop_app.core.store.history import to_chat_messages

        gate = share.for_llm(llm)
        if gate is None or gate.decision is True or not any(m.role == "assistant"
                                                            for m in messages):
            return history
        private = {tool.name for tool in tools if tool.reads_private}
        ids = {m.id for m in messages}
        detail = await self.ctx.store.load_conversation(conversation_id)  # with the steps
        quoting = [m for m in detail.messages if m.id in ids and m.role == "assistant"
                   and any(step.tool in private for step in m.steps)]
        if not quoting:
            return history
        label = "earlier answers in this chat (they used your files or notes)"
        if await gate(label, {"answers": len(quoting)}):
            return history
        dropped = {m.id for m in quoting}
        return list(to_chat_messages([m for m in messages if m.id not in dropped]))

    async def _remember_share(self, conversation_id: str, host: str, allowed: bool) -> None:
        from desktop_app.core.assistants import ChatOptions

        store = self.ctx.store
        conversation = await store.get_conversation(conversation_id)
        try:
            options = ChatOptions.model_validate(conversation.chat_options or {})
        except ValueError:
            options = ChatOptions()
        options = options.with_share_decision(host, allowed)
        await store.set_assistant(conversation_id, conversation.assistant,
                                  options.model_dump(exclude_defaults=True))
        self.share_decided.emit(conversation_id, host, allowed)

    async def _follow_up(self, run: ActiveRun) -> None:
        """Interrupts the engine did not take (sent during the final answer) start the
        next turn, so none is silently lost; after a Stop they simply stay in the history."""
        run.queue.drain()
        if run.done is None or run.done.cancelled or not run.user_message_id:
            return
        pending = [i for i in await self.ctx.store.pending_interrupts(run.conversation_id)
                   if i.run_message_id == run.user_message_id]
        if not pending:
            return
        await self.ctx.store.mark_interrupts_delivered([i.id for i in pending])
        self.start(run.conversation_id, "\n\n".join(i.content for i in pending),
                   model=run.model, mode=run.mode, reuse_user_message=pending[0].message_id)

    # --- during a run ---------------------------------------------------------------------------
    async def interrupt(self, text: str) -> None:
        """Send ``text`` to the working run: shown at once, stored, then queued for the agent."""
        run = self.active
        if run is None or run.recorder is None:
            return
        self.interrupt_added.emit(run.conversation_id, text)
        try:
            await run.recorder.interrupt(text)  # stored first: never lost, even in a crash
        finally:
            run.queue.put(text)

    def stop(self) -> None:
        """Stop the working run; what was streamed so far is kept."""
        run = self.active
        if run is None:
            return
        if run.confirmer is not None:
            run.confirmer.deny_all()
        if run.dag is not None:
            run.dag.stop()
        if run.task is not None and not run.task.done():
            run.task.cancel()

    def answer_confirm(self, request_id: str, allow: bool, always: bool = False) -> bool:
        run = self.active
        if run is None or run.confirmer is None:
            return False
        return run.confirmer.answer(request_id, allow, always)

    async def wait_idle(self) -> None:
        """Wait until no run is working (including follow-up turns)."""
        while self.active is not None:
            task = self.active.task
            if task is not None:
                try:
                    await asyncio.shield(task)
                except asyncio.CancelledError:
                    pass
            await asyncio.sleep(0)
