"""The API server's protocol and errors with a scripted model behind a real server on
loopback, driven by real clients: the openai SDK and plain HTTP (httpx). Every error is in
OpenAI's format with the right status, never a traceback."""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
from pathlib import Path

import httpx2 as httpx
import openai
import pytest

from desktop_app.core import egress
from desktop_app.core.llm.registry import ModelRegistry
from desktop_app.core.llm.testing import ScriptedLLM
from desktop_app.core.llm.types import ChatMessage, LLMResult, ToolCall

from .server_helpers import running

KEY = "dak-test-key-0123456789"


def _registry(*llms) -> ModelRegistry:
    registry = ModelRegistry()
    for llm in llms:
        registry.register(llm.model_id, llm)
    return registry


def _error(response: httpx.Response) -> dict:
    body = response.json()
    assert set(body) == {"error"} and "Traceback" not in response.text
    assert {"message", "type", "param", "code"} <= set(body["error"])
    return body["error"]


def test_models_chat_and_streaming_through_the_openai_sdk() -> None:
    llm = ScriptedLLM(["Hello from the model."] * 3, model_id="local-a")
    with running(_registry(llm), api_key=KEY, models=["local-a"]) as served:
        client = openai.OpenAI(base_url=served.base_url, api_key=KEY)
        assert [m.id for m in client.models.list()] == ["local-a"]
        reply = client.chat.completions.create(
            model="local-a", messages=[{"role": "user", "content": "hi"}])
        assert reply.choices[0].message.content == "Hello from the model."
        assert reply.choices[0].finish_reason == "stop"
        chunks = list(client.chat.completions.create(
            model="local-a", messages=[{"role": "user", "content": "hi"}], stream=True,
            stream_options={"include_usage": True}))
        text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
        assert text == "Hello from the model."
        assert chunks[-1].usage is not None and not chunks[-1].choices  # usage comes last
        assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] == "stop"


def test_tool_calls_come_back_in_the_openai_format_and_a_tool_result_goes_in() -> None:
    call = LLMResult(message=ChatMessage.assistant("", tool_calls=[ToolCall(
        id="call_1", name="get_weather", arguments='{"city": "Paris"}')]),
        finish_reason="tool_calls")
    llm = ScriptedLLM([call, "It is sunny in Paris."], model_id="local-a")
    tools = [{"type": "function", "function": {
        "name": "get_weather", "parameters": {"type": "object", "properties": {
            "city": {"type": "string"}}}}}]
    with running(_registry(llm), api_key=KEY, models=["local-a"]) as served:
        client = openai.OpenAI(base_url=served.base_url, api_key=KEY)
        first = client.chat.completions.create(
            model="local-a", messages=[{"role": "user", "content": "Weather in Paris?"}],
            tools=tools)
        [made] = first.choices[0].message.tool_calls
        assert (made.id, made.function.name, json.loads(made.function.arguments)) == (
            "call_1", "get_weather", {"city": "Paris"})
        assert first.choices[0].finish_reason == "tool_calls"
        second = client.chat.completions.create(model="local-a", tools=tools, messages=[
            {"role": "user", "content": "Weather in Paris?"},
            first.choices[0].message.model_dump(exclude_none=True),
            {"role": "tool", "tool_call_id": "call_1", "content": "sunny, 21 C"}])
        assert second.choices[0].message.content == "It is sunny in Paris."
    sent = llm.calls()[1]
    assert [m.role for m in sent.messages] == ["user", "assistant", "tool"]
    assert sent.messages[1].tool_calls[0].name == "get_weather"
    assert sent.messages[2].content == "sunny, 21 C" and sent.tools


def test_the_async_client_streams_too() -> None:
    llm = ScriptedLLM(["one two three"], model_id="local-a")

    async def ask(base_url: str) -> str:
        client = openai.AsyncOpenAI(base_url=base_url, api_key=KEY)
        parts = []
        async for chunk in await client.chat.completions.create(
                model="local-a", messages=[{"role": "user", "content": "count"}], stream=True):
            if chunk.choices and chunk.choices[0].delta.content:
                parts.append(chunk.choices[0].delta.content)
        await client.close()
        return "".join(parts)

    with running(_registry(llm), api_key=KEY, models=["local-a"]) as served:
        assert asyncio.run(ask(served.base_url)) == "one two three"


def test_errors_have_the_right_status_and_the_openai_shape() -> None:
    llm = ScriptedLLM(["ok"] * 5, model_id="local-a")
    with running(_registry(llm), api_key=KEY, models=["local-a"]) as served:
        url = f"{served.base_url}/chat/completions"
        auth = {"Authorization": f"Bearer {KEY}"}
        good = {"model": "local-a", "messages": [{"role": "user", "content": "hi"}]}
        missing = httpx.post(url, json=good)
        assert missing.status_code == 401 and _error(missing)["code"] == "missing_api_key"
        wrong = httpx.post(url, json=good, headers={"Authorization": "Bearer nope"})
        assert wrong.status_code == 401 and _error(wrong)["code"] == "invalid_api_key"
        unknown = httpx.post(url, json={**good, "model": "gpt-9"}, headers=auth)
        assert unknown.status_code == 404 and _error(unknown)["param"] == "model"
        broken = httpx.post(url, content=b'{"model": "local-a", "messages": [', headers=auth)
        assert broken.status_code == 400 and "not valid JSON" in _error(broken)["message"]
        invalid = httpx.post(url, json={**good, "temperature": 7}, headers=auth)
        assert invalid.status_code == 400 and _error(invalid)["param"] == "temperature"
        image = httpx.post(url, headers=auth, json={**good, "messages": [{"role": "user",
            "content": [{"type": "image_url", "image_url": {"url": "data:,"}}]}]})
        assert image.status_code == 400 and "image_url" in _error(image)["message"]
        huge = httpx.post(url, content=b"x" * (9 * 1024 * 1024), headers=auth)
        assert huge.status_code == 413 and _error(huge)["code"] == "request_too_large"
        nowhere = httpx.get(f"{served.base_url}/files", headers=auth)
        assert nowhere.status_code == 404 and _error(nowhere)
        assert httpx.post(url, json=good, headers=auth).status_code == 200  # still serving


def test_a_full_queue_is_429_and_a_loading_model_is_503() -> None:
    slow = ScriptedLLM(["slow answer"] * 3, model_id="slow", delay=1.0)
    release = threading.Event()

    async def loader(name: str):
        await asyncio.to_thread(release.wait, 20)
        return slow

    registry = _registry(slow)
    with running(registry, api_key=None, models=["slow"], max_waiting=0,
                 loader=loader) as served:
        url = f"{served.base_url}/chat/completions"
        body = {"model": "slow", "messages": [{"role": "user", "content": "hi"}]}
        loading = httpx.post(url, json=body, timeout=30)
        assert loading.status_code == 503 and loading.headers["retry-after"]
        assert _error(loading)["code"] == "model_loading"
        release.set()
        time.sleep(0.2)
        results: list[int] = []
        first = threading.Thread(target=lambda: results.append(
            httpx.post(url, json=body, timeout=30).status_code))
        first.start()
        time.sleep(0.4)  # the first one holds the model; nobody may wait behind it
        full = httpx.post(url, json=body, timeout=30)
        first.join()
        assert full.status_code == 429 and _error(full)["code"] == "queue_full"
        assert results == [200]


def test_twenty_concurrent_clients_and_a_slow_one_are_all_served() -> None:
    llm = ScriptedLLM(default="fine", model_id="local-a", delay=0.01)
    with running(_registry(llm), api_key=KEY, models=["local-a"]) as served:
        host, port = served.base_url.split("//")[1].split("/")[0].split(":")
        stalled = socket.create_connection((host, int(port)))
        stalled.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n")  # and stops

        async def many() -> list[int]:
            async with httpx.AsyncClient(timeout=60) as client:
                replies = await asyncio.gather(*(client.post(
                    f"{served.base_url}/chat/completions",
                    headers={"Authorization": f"Bearer {KEY}"},
                    json={"model": "local-a", "stream": i % 2 == 0,
                          "messages": [{"role": "user", "content": f"q{i}"}]})
                    for i in range(20)))
            return [r.status_code for r in replies]

        assert asyncio.run(many()) == [200] * 20
        stalled.close()


def test_a_client_that_disconnects_stops_the_generation() -> None:
    words = [f"w{i} " for i in range(400)]
    llm = ScriptedLLM(["".join(words)], model_id="local-a", delay=0.02)
    with running(_registry(llm), api_key=None, models=["local-a"]) as served:
        with httpx.stream("POST", f"{served.base_url}/chat/completions", json={
                "model": "local-a", "stream": True,
                "messages": [{"role": "user", "content": "talk"}]}) as response:
            lines = response.iter_lines()
            for _ in range(6):
                next(lines)
        time.sleep(0.5)
        [request] = llm.calls("stream")
        total = len("".join(words))
        assert 0 < request.extra["delivered"] < total // 10, request.extra  # stopped early


def test_every_request_served_is_in_the_ledger_as_local_traffic(app_home: Path) -> None:
    llm = ScriptedLLM(["Hi."], model_id="local-a")
    with running(_registry(llm), api_key=KEY, models=["local-a"]) as served:
        httpx.post(f"{served.base_url}/chat/completions", json={"model": "local-a",
                   "messages": [{"role": "user", "content": "ledger me"}]},
                   headers={"Authorization": f"Bearer {KEY}"})
        httpx.get(f"{served.base_url}/models")  # refused: no key
    rows = egress.ledger().entries()
    served_rows = [r for r in rows if r.purpose.startswith("served")]
    # The refused request served nothing, and leaves no row anyone could grow the ledger
    # with (found by an attack: 300 such requests with long paths added 54 MB).
    assert [(r.host, r.local, r.status) for r in served_rows] == [("127.0.0.1", True, 200)]
    assert "ledger me" in served_rows[0].content and served_rows[0].bytes_sent > 0
    assert KEY not in json.dumps([r.to_dict() for r in rows])


def test_web_pages_and_foreign_host_names_are_refused() -> None:
    """Found by an attack: with --no-key, a web page (or DNS rebinding) could drive the
    server: Origin and Host were not checked."""
    llm = ScriptedLLM(default="fine", model_id="local-a")
    with running(_registry(llm), api_key=None, models=["local-a"]) as served:
        url = f"{served.base_url}/chat/completions"
        body = {"model": "local-a", "messages": [{"role": "user", "content": "hi"}]}
        page = httpx.post(url, json=body, headers={"Origin": "https://evil.example"})
        assert page.status_code == 403 and _error(page)["code"] == "browser_origin_refused"
        rebound = httpx.post(url, json=body, headers={"Host": "evil.example:8765"})
        assert rebound.status_code == 403 and _error(rebound)["code"] == "foreign_host_refused"
        assert httpx.post(url, json=body).status_code == 200
        spoofed = httpx.post(url, json=body, headers={"X-Forwarded-For": "203.0.113.7"})
        assert spoofed.status_code == 200
    hosts = {r.host for r in egress.ledger().entries() if r.purpose.startswith("served")}
    assert hosts == {"127.0.0.1"}  # the header did not set the address
    assert len(llm.calls()) == 2  # the refused ones reached no model


def test_hostile_fields_are_400_not_500_or_minutes_of_work() -> None:
    llm = ScriptedLLM(default="fine", model_id="local-a")
    tools = [{"type": "function", "function": {"name": "real", "parameters": {}}}]
    with running(_registry(llm), api_key=None, models=["local-a"]) as served:
        url = f"{served.base_url}/chat/completions"
        base = {"model": "local-a", "messages": [{"role": "user", "content": "hi"}]}
        cases = {
            "tool_choice": {**base, "tools": tools,
                            "tool_choice": {"type": "function", "function": {"name": "nope"}}},
            "remote ref": {**base, "response_format": {"type": "json_schema", "json_schema": {
                "name": "x", "schema": {"$ref": "http://evil.example/schema.json"}}}},
            "huge enum": {**base, "response_format": {"type": "json_schema", "json_schema": {
                "name": "x", "schema": {"type": "string", "enum": [str(i) for i in
                                                                   range(200_000)]}}}},
            "tool_calls": {**base, "messages": [{"role": "assistant", "tool_calls": ["x"]}]},
            "message": {**base, "messages": ["just text"]},
        }
        for name, body in cases.items():
            reply = httpx.post(url, json=body, timeout=30)
            assert reply.status_code == 400, (name, reply.text)
            assert _error(reply)
        deep = b'{"input": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
        reply = httpx.post(f"{served.base_url}/embeddings", content=deep, timeout=30)
        assert reply.status_code == 400 and _error(reply)
    assert not llm.calls()


def test_a_non_streaming_client_that_leaves_stops_the_model() -> None:
    """Found by an attack: an abandoned non-streaming request kept the model busy for 7.5
    minutes and the next request waited behind it."""
    from desktop_app.core.llm.testing import FunctionLLM

    cancelled = threading.Event()

    class Endless(FunctionLLM):
        async def chat(self, messages, **kwargs):  # type: ignore[override]
            try:
                await asyncio.sleep(3600)
            except asyncio.CancelledError:
                cancelled.set()
                raise

    llm = Endless(lambda _request: "never", model_id="local-a")
    with running(_registry(llm), api_key=None, models=["local-a"]) as served:
        with pytest.raises(httpx.TimeoutException):
            httpx.post(f"{served.base_url}/chat/completions", timeout=1, json={
                "model": "local-a", "messages": [{"role": "user", "content": "hi"}]})
        assert cancelled.wait(10)
