"""How fast a local model runs on this machine: load time, prompt evaluation, generation
and time to first token, measured on a fixed prompt through llama.cpp.

The prompt and output length are fixed so numbers of different models (and of the same
model on different days) compare; each measurement is one pass of a fresh load, as a
user meets it when opening the app.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

#: About 300 tokens: a short system turn and a question, as a first message is.
BENCH_PROMPT = (
    "You are a helpful assistant running on a laptop. Answer clearly and briefly.\n\n"
    + " ".join(
        f"Note {n}: the meeting about the quarterly budget moved to room {100 + n}, "
        f"and the notes from last week are in the shared folder."
        for n in range(1, 13))
    + "\n\nQuestion: summarise the notes above in two sentences.\nAnswer:")
GENERATED_TOKENS = 64


@dataclass(frozen=True)
class BenchResult:
    load_seconds: float
    prompt_tokens: int
    prompt_tokens_per_second: float
    first_token_seconds: float
    generated_tokens: int
    generation_tokens_per_second: float
    context_size: int
    threads: int

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


class BenchCancelled(Exception):
    """The measurement was stopped before it finished."""


def bench_model(path: Path, *, context_size: int = 2048, threads: int | None = None,
                on_step: Callable[[str], None] | None = None) -> BenchResult:
    """Load ``path`` and measure it (blocking: run it off the UI thread)."""
    from desktop_app.core.llm.llama_loading import default_threads, load_llama

    step = on_step or (lambda _text: None)
    threads = threads or default_threads()
    step("loading")
    start = time.perf_counter()
    llama = load_llama(path, context_size=context_size, n_threads=threads, chat_format=None,
                       verbose=False)
    load_seconds = time.perf_counter() - start
    try:
        return bench_loaded(llama, load_seconds, on_step=on_step)
    finally:
        llama.close()


def bench_loaded(llama: Any, load_seconds: float, *, cancel: threading.Event | None = None,
                 on_step: Callable[[str], None] | None = None) -> BenchResult:
    """Measure a model already loaded (the copy the chat uses: no second copy in memory);
    ``load_seconds`` is how long that load took. Starts from an empty context and leaves
    one (the next answer evaluates its prompt again). Raises ``BenchCancelled`` once
    ``cancel`` is set (checked between tokens)."""
    step = on_step or (lambda _text: None)
    stop = cancel or threading.Event()
    llama.reset()
    try:
        tokens = llama.tokenize(BENCH_PROMPT.encode("utf-8"))
        step(f"evaluating a {len(tokens)}-token prompt")
        start = time.perf_counter()
        llama.eval(tokens)
        prompt_seconds = time.perf_counter() - start
        step(f"generating {GENERATED_TOKENS} tokens")
        start = time.perf_counter()
        first = 0.0
        generated = 0
        for _token in llama.generate([], temp=0.0, reset=False):
            if stop.is_set():
                raise BenchCancelled
            generated += 1
            if generated == 1:
                first = time.perf_counter() - start
            if generated >= GENERATED_TOKENS:
                break
        generation_seconds = time.perf_counter() - start
    finally:
        llama.reset()
    # After the first token, the rest is pure generation speed.
    rest = max(generation_seconds - first, 1e-9)
    return BenchResult(
        load_seconds=round(load_seconds, 3),
        prompt_tokens=len(tokens),
        prompt_tokens_per_second=round(len(tokens) / max(prompt_seconds, 1e-9), 1),
        first_token_seconds=round(prompt_seconds + first, 3),
        generated_tokens=generated,
        generation_tokens_per_second=round(max(generated - 1, 0) / rest, 1),
        context_size=llama.n_ctx(), threads=llama.n_threads)


def model_key(path: Path) -> str:
    """Identifies a model file across folders and renames: its name and size."""
    return f"{path.name}:{path.stat().st_size}"
