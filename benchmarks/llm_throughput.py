"""Does the llama.cpp adapter cost speed? LlamaCppLLM.stream_chat versus raw llama_cpp.Llama.

Same model file, same prompt, same thread count, same context size, greedy sampling, in one
process. Repetitions alternate which side goes first, and every repetition starts with a
different first line so neither side profits from its KV cache. Reported per side: time to
first token (TTFT) and generation speed (tokens after the first / time after the first);
then the ratios. Targets: throughput ratio >= 0.97, TTFT overhead <= 5 %.

    .venv/bin/python benchmarks/llm_throughput.py [--reps 5] [--max-tokens 96] [--threads N]

Uses the bundled model (assembled on first use) unless ``--model PATH`` is given. The
machine should be quiet: other processes on the same cores distort both sides.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path

# The adapter's loader goes first: it sets OMP_WAIT_POLICY before llama.cpp loads, so both
# sides run under the same OpenMP settings.
from desktop_app.core.llm import llama_loading  # isort: skip
import llama_cpp  # isort: skip

from desktop_app.core.llm.bundled import ensure_bundled_model
from desktop_app.core.llm.llama_cpp_adapter import LlamaCppLLM
from desktop_app.core.llm.types import ChatMessage

SYSTEM = "You are a careful assistant. Answer with plain numbered lines."
USER = "List the first forty prime numbers, one per line, with a short note on each."


@dataclass
class Sample:
    ttft: float
    tokens: int
    gen_seconds: float
    #: Process CPU seconds for the whole call: less sensitive to other load than wall time.
    cpu_seconds: float

    @property
    def tokens_per_second(self) -> float:
        return (self.tokens - 1) / self.gen_seconds if self.gen_seconds > 0 else 0.0


def _messages(rep: int) -> list[dict[str, str]]:
    # A distinct first line per repetition: the KV cache cannot serve the prompt.
    return [{"role": "system", "content": f"Run {rep}. {SYSTEM}"},
            {"role": "user", "content": USER}]


def run_raw(llm: llama_cpp.Llama, rep: int, max_tokens: int) -> Sample:
    cpu = time.process_time()
    start = time.perf_counter()
    first = last = 0.0
    tokens = 0
    for chunk in llm.create_chat_completion(_messages(rep), stream=True, max_tokens=max_tokens,
                                            temperature=0.0):
        if chunk["choices"][0]["delta"].get("content"):
            last = time.perf_counter()
            first = first or last
            tokens += 1
    return Sample(first - start, tokens, last - first, time.process_time() - cpu)


async def run_adapter(llm: LlamaCppLLM, rep: int, max_tokens: int) -> Sample:
    messages = [ChatMessage(role=m["role"], content=m["content"])  # type: ignore[arg-type]
                for m in _messages(rep)]
    cpu = time.process_time()
    start = time.perf_counter()
    first = last = 0.0
    tokens = 0
    async for chunk in llm.stream_chat(messages, max_tokens=max_tokens, temperature=0.0):
        if chunk.content:
            last = time.perf_counter()
            first = first or last
            tokens += 1
    return Sample(first - start, tokens, last - first, time.process_time() - cpu)


def _summary(name: str, samples: list[Sample]) -> tuple[float, float, float]:
    ttft = statistics.median(s.ttft for s in samples)
    tps = statistics.median(s.tokens_per_second for s in samples)
    cpu = statistics.median(s.cpu_seconds / s.tokens for s in samples)
    tokens = [s.tokens for s in samples]
    print(f"{name:8s} TTFT median {ttft * 1000:7.1f} ms (best {_best_ttft(samples) * 1000:7.1f})"
          f"   generation median {tps:6.2f} tok/s (best {_best_tps(samples):6.2f})"
          f"   CPU {cpu * 1000:6.1f} ms/token   (tokens per run {min(tokens)}-{max(tokens)})")
    return ttft, tps, cpu


# Best-of-N approximates a quiet machine: other load only ever makes a run slower.
def _best_ttft(samples: list[Sample]) -> float:
    return min(s.ttft for s in samples)


def _best_tps(samples: list[Sample]) -> float:
    return max(s.tokens_per_second for s in samples)


async def main_async(args: argparse.Namespace) -> int:
    path = Path(args.model) if args.model else ensure_bundled_model()
    threads = args.threads or llama_loading.default_threads()
    print(f"model {path.name}, threads {threads}, context {args.context}, "
          f"max_tokens {args.max_tokens}, reps {args.reps}, "
          f"OMP_WAIT_POLICY={os.environ.get('OMP_WAIT_POLICY')}, load {os.getloadavg()[0]:.2f}")

    raw = llama_cpp.Llama(model_path=str(path), n_ctx=args.context, n_threads=threads,
                          n_threads_batch=threads, verbose=False)
    adapter = LlamaCppLLM(path, context_size=args.context, n_threads=threads)
    await adapter.load()
    try:
        # Warm-up (first decode allocates buffers, pages weights in): not measured.
        run_raw(raw, -1, 8)
        await run_adapter(adapter, -1, 8)
        raw_samples: list[Sample] = []
        ours: list[Sample] = []
        for rep in range(args.reps):
            if rep % 2 == 0:
                raw_samples.append(run_raw(raw, rep, args.max_tokens))
                ours.append(await run_adapter(adapter, rep, args.max_tokens))
            else:
                ours.append(await run_adapter(adapter, rep, args.max_tokens))
                raw_samples.append(run_raw(raw, rep, args.max_tokens))
            print(f"  rep {rep}: raw {raw_samples[-1].ttft * 1000:6.1f} ms "
                  f"{raw_samples[-1].tokens_per_second:6.2f} tok/s | adapter "
                  f"{ours[-1].ttft * 1000:6.1f} ms {ours[-1].tokens_per_second:6.2f} tok/s")
    finally:
        await adapter.aclose()
        raw.close()

    raw_ttft, raw_tps, raw_cpu = _summary("raw", raw_samples)
    our_ttft, our_tps, our_cpu = _summary("adapter", ours)
    ratio = our_tps / raw_tps if raw_tps else float("nan")
    overhead = our_ttft / raw_ttft - 1 if raw_ttft else float("nan")
    print(f"throughput ratio (adapter/raw): {ratio:.3f}   target >= 0.97  "
          f"{'OK' if ratio >= 0.97 else 'MISS'}")
    print(f"TTFT overhead: {overhead * 100:+.1f} %   target <= 5 %  "
          f"{'OK' if overhead <= 0.05 else 'MISS'}")
    print(f"best-of-{len(ours)}: throughput ratio "
          f"{_best_tps(ours) / _best_tps(raw_samples):.3f}, TTFT overhead "
          f"{(_best_ttft(ours) / _best_ttft(raw_samples) - 1) * 100:+.1f} %")
    print(f"CPU per token (adapter/raw): {our_cpu / raw_cpu:.3f}  (1.0 = no extra work)")
    print(f"load average at end {os.getloadavg()[0]:.2f}")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", help="GGUF file (default: the bundled model)")
    parser.add_argument("--reps", type=int, default=6)
    parser.add_argument("--max-tokens", type=int, default=96)
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--context", type=int, default=2048)
    return asyncio.run(main_async(parser.parse_args()))


if __name__ == "__main__":
    sys.exit(main())
