"""The local API server's cost: generation speed and time to the first token through
``desktop-app serve`` (the app's server, streaming over HTTP on loopback) against raw
llama-cpp-python in the same process, as ratios from one run; then throughput with 1, 4
and 16 concurrent clients (they take turns on one model: throughput should hold, not
multiply, and nothing may fail).

Prompts differ per repetition (so no run reuses another's cached prompt), the same ones
for both sides, which alternate so load on the machine hits both alike; medians reported.

    .venv/bin/python benchmarks/server.py [--reps 5] [--max-tokens 128]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

TOPICS = ["a lighthouse keeper", "a lost umbrella", "a robot gardener", "a night train",
          "a chess club", "a snowed-in bakery", "a talking parrot", "a desert well",
          "a broken clock", "a paper boat", "a city fox", "an old map"]
CONTEXT = 4096


def prompt(index: int) -> str:
    return f"Write a short story about {TOPICS[index % len(TOPICS)]}."


def raw_run(llama: Any, text: str, max_tokens: int) -> tuple[float, float]:
    """(seconds to the first token, generated tokens per second after it)."""
    started = time.perf_counter()
    first = None
    count = 0
    for chunk in llama.create_chat_completion([{"role": "user", "content": text}],
                                              stream=True, temperature=0,
                                              max_tokens=max_tokens):
        if chunk["choices"][0]["delta"].get("content"):
            count += 1
            if first is None:
                first = time.perf_counter()
    ended = time.perf_counter()
    assert first is not None
    return first - started, (count - 1) / max(ended - first, 1e-9)


def server_run(base_url: str, text: str, max_tokens: int) -> tuple[float, float]:
    import httpx2 as httpx

    started = time.perf_counter()
    first = None
    tokens = 0
    with httpx.stream("POST", f"{base_url}/chat/completions", timeout=300, json={
            "model": "bundled", "stream": True, "temperature": 0, "max_tokens": max_tokens,
            "stream_options": {"include_usage": True},
            "messages": [{"role": "user", "content": text}]}) as response:
        for line in response.iter_lines():
            if not line.startswith("data: ") or line == "data: [DONE]":
                continue
            chunk = json.loads(line[6:])
            if chunk.get("usage"):
                tokens = chunk["usage"]["completion_tokens"]
            choices = chunk.get("choices") or []
            if choices and choices[0]["delta"].get("content") and first is None:
                first = time.perf_counter()
    ended = time.perf_counter()
    assert first is not None
    return first - started, (tokens - 1) / max(ended - first, 1e-9)


async def concurrent(base_url: str, clients: int, max_tokens: int) -> tuple[float, int]:
    """(tokens per second over the whole burst, failed requests)."""
    import httpx2 as httpx

    async with httpx.AsyncClient(timeout=600) as client:
        started = time.perf_counter()
        replies = await asyncio.gather(*(client.post(f"{base_url}/chat/completions", json={
            "model": "bundled", "temperature": 0, "max_tokens": max_tokens,
            "messages": [{"role": "user", "content": prompt(i)}]}) for i in range(clients)))
        elapsed = time.perf_counter() - started
    ok = [r for r in replies if r.status_code == 200]
    tokens = sum(r.json()["usage"]["completion_tokens"] for r in ok)
    return tokens / elapsed, len(replies) - len(ok)


def start_server(model_path: Path, threads: int) -> tuple[Any, Any]:
    from desktop_app.core.api_server import ApiServer, ServerOptions
    from desktop_app.core.llm.llama_cpp_adapter import LlamaCppLLM
    from desktop_app.core.llm.registry import ModelRegistry

    registry = ModelRegistry()
    registry.register("bundled", LlamaCppLLM(model_path, name="bundled", context_size=CONTEXT,
                                             n_threads=threads), default=True)
    loop = asyncio.new_event_loop()
    server = ApiServer(registry, ServerOptions(port=0, api_key=None, models=["bundled"]))
    ready = threading.Event()

    def main() -> None:
        asyncio.set_event_loop(loop)
        loop.run_until_complete(server.start())
        ready.set()
        loop.run_forever()

    threading.Thread(target=main, daemon=True).start()
    ready.wait(60)
    return server, loop


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--max-tokens", type=int, default=128)
    parser.add_argument("--threads", type=int, default=0,
                        help="llama.cpp threads for both sides (default: llama-cpp-python's "
                             "own default, half the cores)")
    args = parser.parse_args()
    from llama_cpp import Llama

    from desktop_app.core.llm.bundled import ensure_bundled_model

    model_path = ensure_bundled_model()
    llama = Llama(str(model_path), n_ctx=CONTEXT, verbose=False,
                  **({"n_threads": args.threads} if args.threads else {}))
    threads = int(llama.n_threads) if hasattr(llama, "n_threads") else args.threads or 1
    server, _loop = start_server(model_path, threads)
    base_url = server.base_url
    server_run(base_url, "Say hello.", 8)  # loads the model
    raw_run(llama, "Say hello.", 8)
    raw: list[tuple[float, float]] = []
    served: list[tuple[float, float]] = []
    for rep in range(args.reps):
        text = prompt(rep)
        if rep % 2:
            served.append(server_run(base_url, text, args.max_tokens))
            raw.append(raw_run(llama, text, args.max_tokens))
        else:
            raw.append(raw_run(llama, text, args.max_tokens))
            served.append(server_run(base_url, text, args.max_tokens))
    raw_ttft = statistics.median(r[0] for r in raw)
    raw_tps = statistics.median(r[1] for r in raw)
    srv_ttft = statistics.median(s[0] for s in served)
    srv_tps = statistics.median(s[1] for s in served)
    print(f"llama.cpp threads on both sides: {threads}")
    print(f"{'':28}{'raw llama.cpp':>16}{'through serve':>16}{'ratio / diff':>16}")
    print(f"{'generation tok/s (median)':28}{raw_tps:16.1f}{srv_tps:16.1f}"
          f"{srv_tps / raw_tps:15.2f}x")
    print(f"{'first token, s (median)':28}{raw_ttft:16.3f}{srv_ttft:16.3f}"
          f"{(srv_ttft - raw_ttft) * 1000:+14.0f}ms")
    del llama  # the concurrency runs have the machine to themselves
    print(f"\n{'concurrent clients':28}{'tok/s overall':>16}{'failed':>16}")
    for clients in (1, 4, 16):
        rate, failed = asyncio.run(concurrent(base_url, clients, 48))
        print(f"{clients:<28}{rate:16.1f}{failed:16d}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
