"""The run driver shared by the CLI and the UI: both phases, the full event sequence.

``drive_run`` runs the tool loop, answers interrupts that arrived after it, streams the
synthesis, and always ends with exactly one ``Done`` event (SPEC §8):

* synthesis fails or yields nothing → ``result.answer`` is used; text that was already
  streamed is not sent again;
* the LLM raises → ``ErrorEvent`` with the actionable message, then ``Done(error=...)``;
* the run is cancelled → ``Done(cancelled=True)``, then ``CancelledError`` is re-raised.

``Done.answer`` always equals the concatenation of the ``AnswerDelta`` contents emitted.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import time
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import suppress
from dataclasses import dataclass
from typing import Any

from desktop_app.core.agent.events import (
    AnswerDelta,
    AnswerDone,
    AnswerStart,
    Done,
    ErrorEvent,
    Event,
    Inject,
)
from desktop_app.core.agent.interrupts import InterruptQueue, interrupt_message
from desktop_app.core.agent.metrics import RunClock
from desktop_app.core.agent.react import ReActAgent
from desktop_app.core.agent.result import (
    AgentResult,
    StepRecord,
    draft_from_steps,
    partial_result,
)
from desktop_app.core.errors import DesktopAppError
from desktop_app.core.llm.types import ChatMessage, Usage

log = logging.getLogger(__name__)


@dataclass
class RunOutcome:
    """How a driven run ended. ``done`` is the final event that was emitted."""

    answer: str
    result: AgentResult | None
    done: Done
    error: str | None = None
    cancelled: bool = False
    synthesis_failed: bool = False

    @property
    def usage(self) -> Usage:
        return self.done.usage

    @property
    def iterations(self) -> int:
        return self.done.iterations


def error_message(exc: BaseException) -> str:
    """A message a person can act on (project errors carry their own hint)."""
    if isinstance(exc, DesktopAppError):
        return str(exc)
    return (f"Unexpected error: {type(exc).__name__}: {exc}. This is a bug in desktop-app; "
            "please report it with the steps that led here.")


def logged_error_message(exc: BaseException, what: str) -> str:
    """``error_message(exc)``, logged: with a traceback only for unexpected errors. An
    expected one's message says it all, and its chained cause may quote what a server
    echoed (an API key)."""
    message = error_message(exc)
    if isinstance(exc, DesktopAppError):
        log.info("%s failed: %s", what, message)
    else:
        log.exception("%s failed", what)
    return message


def _fallback_text(answer: str, streamed: str) -> str:
    """What to add after a failed synthesis, never repeating what was already streamed."""
    if not streamed:
        return answer
    if answer.startswith(streamed):
        return answer[len(streamed):]
    if not answer or answer in streamed:
        return ""
    return f"\n\n{answer}"


def declined_tools(steps: Sequence[StepRecord]) -> list[str]:
    """Tools the user declined in this run and that did not run later after all."""
    ran = {step.tool for step in steps if step.ok}
    return list(dict.fromkeys(s.tool for s in steps if s.declined and s.tool not in ran))


def declined_notice(tools: Sequence[str]) -> str:
    return (f"Not done: you declined {', '.join(tools)}, so it did not run and nothing was "
            "changed.")


async def drive_run(agent: ReActAgent, query: str, *, emit: Callable[[Event], Any],
                    history: Sequence[ChatMessage] = (),
                    interrupt_queue: InterruptQueue | None = None,
                    started: float | None = None) -> RunOutcome:
    """Run both phases of ``agent`` for ``query``, emitting every event; never raises except
    ``CancelledError`` (after emitting ``Done(cancelled=True)``). ``started``
    (``time.perf_counter()``): when the person asked, if before this call (the window
    loads the model first); the reported times count from it."""

    async def send(event: Event) -> None:
        outcome = emit(event)
        if inspect.isawaitable(outcome):
            await outcome

    clock = RunClock(started)
    with clock.measuring():
        return await _drive(agent, query, send, history, interrupt_queue, clock)


async def _drive(agent: ReActAgent, query: str, send: Callable[[Event], Any],
                 history: Sequence[ChatMessage], interrupt_queue: InterruptQueue | None,
                 clock: RunClock) -> RunOutcome:
    deltas: list[str] = []
    result: AgentResult | None = None

    def finish(**extra: Any) -> Done:
        source = result
        if source is None and "exc" in extra:
            source = partial_result(extra["exc"])
        extra.pop("exc", None)
        answer = "".join(deltas)
        usage = source.usage if source else Usage()
        if extra.get("cancelled") and answer and not usage.completion_tokens:
            # Stopped before the model reported its usage: count what was shown.
            usage = Usage.of(usage.prompt_tokens, _count_tokens(agent.llm, answer))
        if source is not None and source.answer_cut and not extra.get("cancelled"):
            extra["cut"] = source.answer_cut
        return Done(answer=answer, iterations=source.iterations if source else 0,
                    usage=usage,
                    elapsed=round(time.perf_counter() - clock.started, 4),
                    model=agent.llm.model_id,
                    metrics=clock.metrics(),
                    **extra)

    async def answer_delta(text: str) -> None:
        clock.answer_text(text)
        deltas.append(text)
        await send(AnswerDelta(content=text))

    answer_started = False

    async def start_answer() -> None:
        nonlocal answer_started
        if not answer_started:
            answer_started = True
            await send(AnswerStart())

    async def cite_documents(run: AgentResult) -> None:
        # Passages the answer used, cited at its end when the model cited none itself.
        from desktop_app.core.documents.citations import citation_suffix, parse_passages

        found = [s.observation for s in run.steps
                 if s.error is None and parse_passages([s.observation])]
        if found and "".join(deltas).strip():
            suffix = citation_suffix("".join(deltas), found, query)
            if suffix:
                await answer_delta(suffix)

    async def live_answer(text: str) -> None:
        # The loop streams a direct answer as it is generated (no second generation).
        await start_answer()
        await answer_delta(text)

    try:
        result = await agent.run(query, history=history, interrupt_queue=interrupt_queue,
                                 on_event=send, on_answer=live_answer)
        late = interrupt_queue.drain() if interrupt_queue is not None else []
        if late:
            # Arrived after the loop's last drain but before synthesis: answer them now.
            result.interrupts.extend(late)
            result.messages.append(interrupt_message(late))
            result.answer_streamed = False
            for text in late:
                await send(Inject(content=text))

        if result.answer_streamed:
            await cite_documents(result)
            await send(AnswerDone())
            done = finish()
            await send(done)
            return RunOutcome(answer=done.answer, result=result, done=done)

        await start_answer()
        not_done = declined_tools(result.steps)
        if not_done and not any(step.ok for step in result.steps):
            # Nothing ran because the user said no: the answer says exactly that (written
            # from the trace, the bundled model claimed the declined write had happened).
            await answer_delta(declined_notice(not_done))
            await send(AnswerDone())
            done = finish()
            await send(done)
            return RunOutcome(answer=done.answer, result=result, done=done)
        synthesis_error: BaseException | None = None
        separator = "\n\n" if "".join(deltas).strip() else ""
        try:
            async for delta in agent.stream_answer(query, result):
                if separator and delta.strip():
                    delta, separator = separator + delta.lstrip(), ""
                elif separator:
                    continue
                await answer_delta(delta)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - falls back to the loop's answer
            synthesis_error = exc
            log.warning("synthesis failed, falling back to the loop's answer: %s", exc)
        failed = synthesis_error is not None or not "".join(deltas)[len(result.streamed):].strip()
        if synthesis_error is not None:
            await send(ErrorEvent(
                message=f"Writing the final answer failed ({error_message(synthesis_error)}); "
                        "showing the agent's brief answer instead.",
                kind="synthesis"))
        if failed:
            extra = _fallback_text(result.answer or draft_from_steps(result.steps),
                                   "".join(deltas))
            if extra:
                await answer_delta(extra)
        if not_done:
            await answer_delta("\n\n" + declined_notice(not_done))
        await cite_documents(result)
        await send(AnswerDone())
        if not "".join(deltas).strip():
            # Never report an empty answer as a success.
            message = (f"The model '{agent.llm.model_id}' gave an empty answer. Try again, "
                       "rephrase the question, or pick another model.")
            await send(ErrorEvent(message=message, kind="empty_answer"))
            done = finish(error=message)
            await send(done)
            return RunOutcome(answer=done.answer, result=result, done=done, error=message,
                              synthesis_failed=failed)
        done = finish()
        await send(done)
        return RunOutcome(answer=done.answer, result=result, done=done, synthesis_failed=failed)
    except asyncio.CancelledError as exc:
        done = finish(cancelled=True, exc=exc)
        await send(done)
        raise
    except Exception as exc:  # noqa: BLE001 - any failure becomes an ErrorEvent
        message = logged_error_message(exc, "run")
        await send(ErrorEvent(message=message, kind=type(exc).__name__))
        done = finish(error=message, exc=exc)
        await send(done)
        return RunOutcome(answer=done.answer, result=result or partial_result(exc), done=done,
                          error=message)


def _count_tokens(llm: Any, text: str) -> int:
    try:
        return int(llm.count_tokens(text))
    except Exception:  # noqa: BLE001 - a model without a tokenizer here: a rough count
        return max(1, len(text) // 4)


async def iter_run(agent: ReActAgent, query: str, *, history: Sequence[ChatMessage] = (),
                   interrupt_queue: InterruptQueue | None = None) -> AsyncIterator[Event]:
    """The events of ``drive_run`` as an async iterator; closing it early cancels the run."""
    queue: asyncio.Queue[Event | None] = asyncio.Queue()
    task = asyncio.create_task(drive_run(agent, query, emit=queue.put_nowait, history=history,
                                         interrupt_queue=interrupt_queue))
    task.add_done_callback(lambda _: queue.put_nowait(None))
    try:
        while (event := await queue.get()) is not None:
            yield event
        await task
    finally:
        if not task.done():
            task.cancel()
            with suppress(asyncio.CancelledError):
                await task
