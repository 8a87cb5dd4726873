"""`desktop-app serve`'s API on the real bundled model (one server for the module, the
session's shared model), with real clients: the openai SDK, plain HTTP, and a third-party
OpenAI-compatible client from PyPI (Simon Willison's `llm` CLI) set up the way its users
set it up. Also the CLI command itself, started as a process."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2 as httpx
import numpy as np
import openai
import pytest

from desktop_app.core.config.settings import Settings
from desktop_app.core.llm.registry import ModelRegistry
from desktop_app.core.tools.base import ToolRegistry
from desktop_app.core.tools.builtin import default_tools

from .server_helpers import ThreadedServer, running

pytestmark = pytest.mark.real_model
KEY = "dak-real-model-test-key"
MODEL = "bundled"


@pytest.fixture(scope="module")
def served(bundled_llm: Any) -> Iterator[ThreadedServer]:
    registry = ModelRegistry()
    registry.register(MODEL, bundled_llm, default=True)
    with running(registry, api_key=KEY, models=[MODEL],
                 tools=lambda: ToolRegistry(default_tools(Settings()))) as server:
        yield server


@pytest.fixture(scope="module")
def client(served: ThreadedServer) -> openai.OpenAI:
    return openai.OpenAI(base_url=served.base_url, api_key=KEY, max_retries=5)


def test_an_answer_streams_with_usage_last(client: openai.OpenAI) -> None:
    chunks = list(client.chat.completions.create(
        model=MODEL, messages=[{"role": "user", "content": "What is the capital of France?"}],
        stream=True, stream_options={"include_usage": True}, temperature=0, max_tokens=40))
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert "Paris" in text
    assert chunks[-1].usage is not None and chunks[-1].usage.completion_tokens > 0


def test_tools_give_real_tool_calls(client: openai.OpenAI) -> None:
    tools = [{"type": "function", "function": {
        "name": "get_weather", "description": "Current weather for a city",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                       "required": ["city"]}}}]
    reply = client.chat.completions.create(
        model=MODEL, messages=[{"role": "user", "content": "What is the weather in Berlin?"}],
        tools=tools, tool_choice="required", temperature=0)
    [call] = reply.choices[0].message.tool_calls
    assert call.function.name == "get_weather"
    assert "berlin" in json.loads(call.function.arguments)["city"].lower()
    assert reply.choices[0].finish_reason == "tool_calls"


def test_json_schema_output_follows_the_schema(client: openai.OpenAI) -> None:
    schema = {"type": "object", "properties": {"name": {"type": "string"},
                                               "age": {"type": "integer"}},
              "required": ["name", "age"], "additionalProperties": False}
    reply = client.chat.completions.create(
        model=MODEL, temperature=0, max_tokens=80,
        messages=[{"role": "user", "content": "Invent a person: name and age."}],
        response_format={"type": "json_schema", "json_schema": {"name": "p", "schema": schema}})
    data = json.loads(reply.choices[0].message.content)
    assert set(data) == {"name", "age"} and isinstance(data["age"], int)


def test_stop_and_seed_are_honoured(client: openai.OpenAI) -> None:
    ask = {"model": MODEL, "max_tokens": 60,
           "messages": [{"role": "user", "content": "Count from 1 to 10, comma separated."}]}
    stopped = client.chat.completions.create(**ask, temperature=0, stop=["5"])
    assert "4" in stopped.choices[0].message.content and "5" not in stopped.choices[0].message.content
    one = client.chat.completions.create(**ask, temperature=1.0, seed=7)
    two = client.chat.completions.create(**ask, temperature=1.0, seed=7)
    assert one.choices[0].message.content == two.choices[0].message.content


def test_embeddings_put_related_texts_closer(client: openai.OpenAI) -> None:
    result = client.embeddings.create(model="all-MiniLM-L6-v2", input=[
        "The cat sat on the mat.", "A kitten rested on the rug.", "Stock prices fell sharply."])
    vectors = [np.array(item.embedding) for item in result.data]
    assert all(len(v) == 384 for v in vectors)
    near, far = float(vectors[0] @ vectors[1]), float(vectors[0] @ vectors[2])
    assert near > far + 0.2


def test_the_agent_model_uses_the_app_s_tools(client: openai.OpenAI) -> None:
    reply = client.chat.completions.create(
        model="desktop-app-agent", messages=[{"role": "user", "content": "What is 1234*5678?"}])
    assert "7006652" in reply.choices[0].message.content.replace(",", "")
    steps = (reply.model_extra or {})["desktop_app"]["steps"]
    assert any(step["tool"] == "calculator" and step["status"] == "done" for step in steps)


def test_a_disconnect_stops_the_model_at_once(served: ThreadedServer, bundled_llm: Any) -> None:
    with httpx.stream("POST", f"{served.base_url}/chat/completions", timeout=60,
                      headers={"Authorization": f"Bearer {KEY}"}, json={
                          "model": MODEL, "stream": True, "max_tokens": 400, "temperature": 0,
                          "messages": [{"role": "user",
                                        "content": "Write a long story about a lighthouse."}]}
                      ) as response:
        seen = 0
        for line in response.iter_lines():
            if line.startswith("data: ") and '"content"' in line:
                seen += 1
            if seen >= 5:
                break
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and not (bundled_llm.last_stats and
                                               bundled_llm.last_stats.cancelled):
        time.sleep(0.05)
    stats = bundled_llm.last_stats
    assert stats.cancelled and stats.completion_tokens <= seen + 3, stats


def test_the_llm_cli_talks_to_the_server_as_its_users_set_it_up(
        served: ThreadedServer, tmp_path: Path) -> None:
    program = shutil.which("llm", path=str(Path(sys.executable).parent))
    assert program, "the llm CLI is a dev dependency"
    home = tmp_path / "llm-home"
    home.mkdir()
    (home / "extra-openai-models.yaml").write_text(
        f"- model_id: desktop\n  model_name: {MODEL}\n  api_base: \"{served.base_url}\"\n"
        "  api_key_name: desktop\n")
    env = {**os.environ, "LLM_USER_PATH": str(home)}
    subprocess.run([program, "keys", "set", "desktop", "--value", KEY], env=env, check=True,
                   timeout=60)
    done = subprocess.run([program, "-m", "desktop", "--no-log", "-o", "temperature", "0",
                           "What is the capital of Italy? One word."],
                          check=False, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "Rome" in done.stdout


def test_the_serve_command_starts_answers_and_refuses_without_its_key(
        bundled_model_path: Path, tmp_path: Path) -> None:
    import re

    home = tmp_path / "home"
    env = {**os.environ, "DESKTOP_APP_HOME": str(home), "PYTHONUNBUFFERED": "1"}
    process = subprocess.Popen(
        [sys.executable, "-c", ("import sys; from desktop_app.cli import main; "
                                "raise SystemExit(main(sys.argv[1:]))"),
         "serve", "--port", "0", "--api-key", "cli-key", "--no-agent"],
        env=env, stderr=subprocess.PIPE, text=True)
    assert process.stderr is not None
    seen: list[str] = []
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            line = process.stderr.readline()
            if not line:
                break
            seen.append(line)
            if "Serving" in line:
                break
        found = re.search(r"http://127\.0\.0\.1:(\d+)/v1", "".join(seen))
        assert found, seen
        base = found.group(0)
        assert httpx.get(f"{base}/models", timeout=30).status_code == 401
        models = httpx.get(f"{base}/models", timeout=30,
                           headers={"Authorization": "Bearer cli-key"}).json()
        [name] = [m["id"] for m in models["data"]]
        client = openai.OpenAI(base_url=base, api_key="cli-key", max_retries=10, timeout=120)
        answer = client.chat.completions.create(
            model=name, messages=[{"role": "user", "content": "Say OK."}], max_tokens=8)
        assert answer.choices[0].message.content.strip()
    finally:
        process.terminate()
        process.wait(30)


def test_a_prompt_over_the_context_is_a_400_streaming_or_not(served: ThreadedServer) -> None:
    long = "word " * 6000  # the shared model holds 4,096 tokens
    for stream in (False, True):
        reply = httpx.post(f"{served.base_url}/chat/completions", timeout=120,
                           headers={"Authorization": f"Bearer {KEY}"}, json={
                               "model": MODEL, "stream": stream,
                               "messages": [{"role": "user", "content": long}]})
        assert reply.status_code == 400, reply.text
        error = reply.json()["error"]
        assert error["code"] == "context_length_exceeded" and "4,096" in error["message"]
