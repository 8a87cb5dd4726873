"""Compare mode: one prompt through several models, measured from the run's events."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from desktop_app.core.agent.react import ReActAgent
from desktop_app.core.compare import CompareTarget, compare_models, format_table
from desktop_app.core.errors import LLMConnectionError
from desktop_app.core.llm.base import LLM
from desktop_app.core.llm.testing import ScriptedLLM, json_action, json_final
from desktop_app.core.tools.base import ToolRegistry
from desktop_app.core.tools.builtin import default_tools


def _agent(llm: LLM) -> ReActAgent:
    return ReActAgent(llm, ToolRegistry(default_tools()), max_iterations=5)


class _Timed(ScriptedLLM):
    """Records when each call started and ended, to see what overlapped."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.spans: list[tuple[float, float]] = []

    async def chat(self, messages, **kwargs):  # type: ignore[no-untyped-def,override]
        loop = asyncio.get_running_loop()
        start = loop.time()
        result = await super().chat(messages, **kwargs)
        self.spans.append((start, loop.time()))
        return result


def test_rows_measure_tools_tokens_and_answer() -> None:
    llm = ScriptedLLM([json_action("calculator", {"expression": "6*7"}), json_final("42"),
                       "The answer is **42**."], model_id="m1")
    rows = asyncio.run(compare_models("what is 6*7", [CompareTarget("one", llm, local=True)],
                                      _agent))
    row = rows[0]
    assert row.tool_calls == 1
    assert row.answer == "The answer is **42**."
    assert row.ttft is not None and 0 <= row.ttft <= row.elapsed
    assert row.usage.completion_tokens > 0
    assert row.tokens_per_second and row.tokens_per_second > 0
    assert row.error is None


def test_local_models_take_turns_remote_ones_overlap() -> None:
    def make(name: str) -> _Timed:
        return _Timed([json_final("x"), "answer"], model_id=name, delay=0.2)

    local_a, local_b, remote = make("a"), make("b"), make("r")
    targets = [CompareTarget("a", local_a, local=True), CompareTarget("b", local_b, local=True),
               CompareTarget("r", remote, local=False)]
    rows = asyncio.run(compare_models("q", targets, _agent))
    assert [r.name for r in rows] == ["a", "b", "r"]
    a_end = local_a.spans[0][1]
    b_start = local_b.spans[0][0]
    assert b_start >= a_end, "two local models must not share the CPU at once"
    r_start = remote.spans[0][0]
    assert r_start < a_end, "a remote model runs while the local ones do"


def test_a_failing_model_is_a_row_not_a_crash() -> None:
    broken = ScriptedLLM([LLMConnectionError("Could not reach http://127.0.0.1:9/v1.")],
                         model_id="down")
    fine = ScriptedLLM([json_final("ok"), "fine"], model_id="up")
    rows = asyncio.run(compare_models("q", [CompareTarget("down", broken),
                                            CompareTarget("up", fine)], _agent))
    assert rows[0].error and "Could not reach" in rows[0].error
    assert rows[1].error is None and rows[1].answer == "fine"
    table = format_table(rows)
    assert "error" in table.splitlines()[2] and "ok" in table.splitlines()[3]


@pytest.mark.real_model
def test_cli_compares_bundled_model_with_a_loopback_server(
        openai_server, app_home: Path, bundled_model_path: Path) -> None:  # type: ignore[no-untyped-def]
    config = app_home / "config"
    config.mkdir(parents=True, exist_ok=True)
    (config / "settings.json").write_text(json.dumps({
        "endpoints": [{"name": "server", "base_url": openai_server.base_url,
                       "model": openai_server.model, "context_size": 4096}],
    }))
    env = dict(os.environ)
    proc = subprocess.run(
        [sys.executable, "-m", "desktop_app", "compare", "Reply with the word hello.",
         "-m", "qwen2.5-coder-0.5b", "-m", "server", "--max-iterations", "2"],
        capture_output=True, text=True, env=env, timeout=600, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    lines = proc.stdout.splitlines()
    assert lines[0].split()[:2] == ["model", "first"]
    assert any(line.startswith("qwen2.5-coder-0.5b") for line in lines[2:4])
    assert any(line.startswith("server") for line in lines[2:4])
    assert "## qwen2.5-coder-0.5b" in proc.stdout and "## server" in proc.stdout
