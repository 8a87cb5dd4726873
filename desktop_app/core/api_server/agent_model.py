"""The model ``desktop-app-agent``: the app's own agent (its tools, the user's notes and
documents as configured) answering through the API. Its answer streams like any model's;
the run's tool steps travel in an extra field, ``desktop_app``, that plain clients ignore.

Tools that change something (write a file, save a note) ask the user first in the app;
nobody can answer such a question over the API, so they do not run here, and the model is
told so, as when a user declines.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from starlette.responses import JSONResponse, Response, StreamingResponse

from desktop_app.core.api_server.pool import AGENT_MODEL, ModelPool
from desktop_app.core.api_server.protocol import (
    ApiError,
    ChatRequest,
    chunk_body,
    completion_body,
    new_id,
    sse,
    to_messages,
)
from desktop_app.core.llm.types import ChatMessage

if TYPE_CHECKING:
    from desktop_app.core.agent.events import Event
    from desktop_app.core.tools.base import Change


async def _nobody_to_ask(_tool: str, _args: dict[str, Any], _change: Change | None) -> bool:
    return False


def _step(event: Event) -> dict[str, Any] | None:
    from desktop_app.core.agent.events import IterationDone, IterationStart

    if isinstance(event, IterationStart):
        return {"status": "start", "tool": event.tool_name, "arguments": event.tool_args,
                "iteration": event.iteration}
    if isinstance(event, IterationDone):
        return {"status": "done", "tool": event.tool_name, "result": event.observation,
                "error": event.error, "iteration": event.iteration}
    return None


async def agent_completion(pool: ModelPool, parsed: ChatRequest, tools: Any) -> Response:
    from desktop_app.core.agent.factory import make_agent

    messages = to_messages(parsed.messages)
    if messages[-1].role != "user" or not messages[-1].content.strip():
        raise ApiError(400, "The last message must be the user's question.", param="messages")
    history = [m for m in messages[:-1] if m.role != "system"]
    query = messages[-1].content
    name = pool.default_chat_model()
    llm = await pool.ready(name)
    options: dict[str, Any] = {}
    if parsed.temperature is not None:
        options["temperature"] = parsed.temperature
    if parsed.token_limit is not None:
        options["synthesis_max_tokens"] = parsed.token_limit
    agent = make_agent(llm, tools, confirm=_nobody_to_ask, **options)
    request_id = new_id()
    queue = pool.queue(name)
    queue.check_room()
    events: asyncio.Queue[Event | None] = asyncio.Queue()

    async def run() -> Any:
        from desktop_app.core.agent.runner import drive_run

        try:
            return await drive_run(agent, query, emit=events.put_nowait, history=history)
        finally:
            events.put_nowait(None)

    if not parsed.stream:
        async with pool.serving(), queue.turn():
            task = asyncio.ensure_future(run())
            steps = []
            while (event := await events.get()) is not None:
                step = _step(event)
                if step is not None:
                    steps.append(step)
            outcome = await task
        if outcome.error:
            raise ApiError(500, outcome.error, kind="server_error")
        return JSONResponse(completion_body(
            request_id, AGENT_MODEL, ChatMessage.assistant(outcome.answer), outcome.usage,
            "stop", extra={"desktop_app": {"steps": steps, "model": name}}))

    async def stream() -> AsyncIterator[bytes]:
        from desktop_app.core.agent.events import AnswerDelta, Done

        async with pool.serving(), queue.turn():
            yield sse(chunk_body(request_id, AGENT_MODEL,
                                 delta={"role": "assistant", "content": ""}))
            task = asyncio.ensure_future(run())
            try:
                done: Done | None = None
                while (event := await events.get()) is not None:
                    if isinstance(event, AnswerDelta) and event.content:
                        yield sse(chunk_body(request_id, AGENT_MODEL,
                                             delta={"content": event.content}))
                    elif isinstance(event, Done):
                        done = event
                    else:
                        step = _step(event)
                        if step is not None:
                            yield sse(chunk_body(request_id, AGENT_MODEL,
                                                 extra={"desktop_app": {"step": step}}))
                await task
            finally:
                if not task.done():  # the client went away: stop the run
                    task.cancel()
            if done is not None and done.error:
                yield sse({"error": ApiError(500, done.error, kind="server_error").body()
                           ["error"]})
                return
            yield sse(chunk_body(request_id, AGENT_MODEL, finish_reason="stop"))
            if done is not None:
                yield sse(chunk_body(request_id, AGENT_MODEL, usage=done.usage))
            yield sse("[DONE]")

    return StreamingResponse(stream(), media_type="text/event-stream",
                             headers={"Cache-Control": "no-store"})
