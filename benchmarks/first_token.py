"""How soon does the first word appear? ``ask`` against ``chat`` and raw llama.cpp, and
synthesis with and without the loop's KV cache — as ratios from one run.

Part 1, fresh processes (what a person running the command sees): for each no-tool
question, the seconds from starting the process to the first byte of the answer on stdout,
for ``desktop-app ask`` (the agent, tools offered), ``desktop-app chat`` (the model alone)
and a raw llama-cpp-python script (load, stream). Runs alternate so load on the machine
hits all three alike; medians are reported. The first ``ask`` ever also evaluates and saves
the system turn's state; it is run once beforehand and reported on its own ("cold").

Part 2, in one process: after a 3-tool-call run on the bundled model, the time to the first
synthesis token when the KV cache still holds the loop's prompt, against the same call after
the cache was cleared (a full re-evaluation), for each synthesis style, and for
``after_tools="continue"`` (no synthesis: the loop's own next turn is the answer).

    .venv/bin/python benchmarks/first_token.py [--reps 3]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
PYTHON = sys.executable
QUESTIONS = ("Explain a Python generator in two sentences.", "What is the capital of France?",
             "Give me three tips for better sleep.")
RAW_SCRIPT = """
import os, sys
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
from llama_cpp import Llama
m = Llama(sys.argv[1], n_ctx=8192, verbose=False)
for chunk in m.create_chat_completion([{"role": "user", "content": sys.argv[2]}], stream=True):
    text = chunk["choices"][0]["delta"].get("content")
    if text:
        sys.stdout.write(text); sys.stdout.flush()
"""


def first_byte(command: list[str], env: dict[str, str]) -> float:
    """Seconds from starting ``command`` to its first non-blank stdout byte."""
    started = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                               stdin=subprocess.DEVNULL, env=env)
    assert process.stdout is not None
    while True:
        byte = process.stdout.read(1)
        if not byte:
            raise RuntimeError(f"{command[:3]} printed nothing")
        if not byte.isspace():
            elapsed = time.perf_counter() - started
            break
    process.kill()
    process.wait()
    return elapsed


def part_one(reps: int, model: Path) -> dict[str, Any]:
    home = Path(tempfile.mkdtemp(prefix="first-token-"))
    env = dict(os.environ, DESKTOP_APP_HOME=str(home), DESKTOP_APP_BUNDLED_MODEL=str(model),
               PYTHONUNBUFFERED="1")
    app = [PYTHON, "-m", "desktop_app"]
    cold = first_byte([*app, "ask", QUESTIONS[1]], env)  # evaluates + saves the system turn
    samples: dict[str, list[float]] = {"ask": [], "chat": [], "raw": []}
    for rep in range(reps):
        for question in QUESTIONS:
            runs = {"ask": [*app, "ask", question], "chat": [*app, "chat", question],
                    "raw": [PYTHON, "-c", RAW_SCRIPT, str(model), question]}
            order = list(runs) if rep % 2 == 0 else list(reversed(runs))
            for name in order:
                samples[name].append(first_byte(runs[name], env))
    medians = {name: statistics.median(values) for name, values in samples.items()}
    return {"cold_first_ask": cold, "medians": medians, "samples": samples,
            "ask_over_chat": medians["ask"] / medians["chat"],
            "chat_over_raw": medians["chat"] / medians["raw"]}


async def part_two(model: Path) -> dict[str, Any]:
    from desktop_app.core.agent.factory import make_agent
    from desktop_app.core.agent.prompts import DEFAULT_SYSTEM_PROMPT, native_system_prompt
    from desktop_app.core.agent.result import AgentResult
    from desktop_app.core.llm.llama_cpp_adapter import LlamaCppLLM
    from desktop_app.core.llm.types import ChatMessage, ToolCall, Usage
    from desktop_app.core.tools.base import ToolRegistry
    from desktop_app.core.tools.builtin import default_tools

    tools = ToolRegistry(default_tools())
    specs = tools.specs()
    calls = [("convert_units", {"value": 10, "from_unit": "km", "to_unit": "mi"}),
             ("convert_units", {"value": 5, "from_unit": "kg", "to_unit": "lb"}),
             ("convert_units", {"value": 20, "from_unit": "C", "to_unit": "F"})]
    messages = [ChatMessage.system(native_system_prompt(DEFAULT_SYSTEM_PROMPT)),
                ChatMessage.user("Convert 10 km to miles, 5 kg to pounds and 20 °C to "
                                 "Fahrenheit.", pinned=True)]
    for number, (name, args) in enumerate(calls):
        observation = (await tools.get(name).run(args)).text
        messages += [ChatMessage.assistant("", tool_calls=[ToolCall(
                         id=f"call_{number}", name=name, arguments=json.dumps(args))]),
                     ChatMessage.tool(observation, tool_call_id=f"call_{number}", name=name)]
    out: dict[str, Any] = {}
    llm = LlamaCppLLM(model, context_size=8192)  # no disk states: "cleared" means cleared

    async def reused_and_cleared(cached: list[Any], answer: Any) -> dict[str, float]:
        """Seconds to the first token of ``answer()`` with ``cached`` in the KV cache,
        against the same after something unrelated filled it (a full re-evaluation)."""
        timings = {}
        for case in ("reused", "cleared"):
            primer = cached if case == "reused" else [ChatMessage.user("Say OK.")]
            await llm.chat(primer, tools=specs if case == "reused" else None, max_tokens=1)
            started = time.perf_counter()
            async for _ in answer():
                timings[case] = time.perf_counter() - started
                break
            await llm.wait_idle()
        return {**timings, "ratio": timings["reused"] / timings["cleared"]}

    try:
        for style in ("shared_prefix", "conversation", "separate"):
            agent = make_agent(llm, tools, synthesis=style, synthesis_max_tokens=8)
            result = AgentResult(answer="", steps=[], iterations=4, usage=Usage(),
                                 messages=list(messages), query=messages[1].content,
                                 mode="native", loop_tools=specs)
            # The loop's last call: its whole prompt is in the KV cache.
            out[style] = await reused_and_cleared(
                messages, lambda a=agent, r=result: a.stream_answer(r.query, r))

        async def continued() -> Any:
            async for chunk in llm.stream_chat(messages, tools=specs, tool_choice="none",
                                               max_tokens=8):
                if chunk.content:
                    yield chunk

        # after_tools="continue": no synthesis call; the answer is the loop's own next turn,
        # whose prompt is the cached trace (up to the last call) plus the last tool result.
        out["continue"] = await reused_and_cleared(messages[:-1], continued)
    finally:
        await llm.aclose()
    return out


def print_synthesis(two: dict[str, Any]) -> None:
    print("Time to the first answer token after a 3-tool-call run:")
    for style, t in two.items():
        print(f"  {style:<14} cache reused {t['reused']:.2f} s, cleared {t['cleared']:.2f} s "
              f"-> {t['ratio']:.2f}x (target <= 0.3x)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--synthesis-only", action="store_true",
                        help="only part 2 (after-tools answer with and without the cache)")
    args = parser.parse_args()
    from desktop_app.core.llm.bundled import ensure_bundled_model

    model = ensure_bundled_model()
    two = asyncio.run(part_two(model))
    if args.synthesis_only:
        print_synthesis(two)
        return 0
    one = part_one(args.reps, model)
    if args.json:
        print(json.dumps({"fresh_process": one, "synthesis": two}, indent=1))
        return 0
    m = one["medians"]
    print("Time to the first answer byte, fresh process, no-tool questions (median of "
          f"{len(one['samples']['ask'])}):")
    print(f"  raw llama.cpp  {m['raw']:.2f} s")
    print(f"  chat           {m['chat']:.2f} s   ({one['chat_over_raw']:.2f}x raw)")
    print(f"  ask            {m['ask']:.2f} s   ({one['ask_over_chat']:.2f}x chat; target <= 1.5x)")
    print(f"  ask, first ever (evaluates and saves the system turn): {one['cold_first_ask']:.2f} s")
    print_synthesis(two)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
