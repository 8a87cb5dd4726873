"""Agent quality on the everyday suite, dev and held-out splits side by side: the bundled
model, and the same GGUF behind an OpenAI-compatible server.

Configurations, all in one run so their numbers are comparable:

* ``bundled`` — the default: the model's own tool-call format (what users get);
* ``bundled-json`` — the design's JSON-mode loop with llama.cpp grammar-constrained JSON
  (``native_tools=False, constrained_json=True``): the old path, for comparison;
* ``server`` — the same GGUF behind llama-cpp-python's OpenAI-compatible server on
  127.0.0.1, started as its README starts it (the GGUF's own chat template), driven through
  the ``openai`` SDK with native function calling: the endpoint path. That server returns
  the model's calls as text, which the adapter reads (``llm/text_calls.py``);
* ``server-chatml-fc`` — the same server with ``--chat_format chatml-function-calling``
  (its own function-calling prompt; the bundled model calls no tool in it).

    .venv/bin/python benchmarks/agent_eval.py [--config bundled] [--split dev|heldout|all]
                                              [--category C]... [--language L]...
                                              [--json] [--save F]

Prints one scoreboard, a column per configuration and split (pass rates per category, tool
tasks, no-tool questions, near-misses, other languages and each language, how tools came
to be called, mean time per task, median time to the first answer token). The held-out
split (373 tasks) takes about 50 minutes on 2 cores for one configuration. Results are not
stored in the user's history.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from desktop_app.core.evals import Summary, load_suite, react_runner, result_line, run_suite
from desktop_app.core.evals.report import scoreboard
from desktop_app.core.llm.base import LLM

ROOT = Path(__file__).resolve().parents[1]
CONFIGS = ("bundled", "bundled-json", "server", "server-chatml-fc")
#: The server's ``--chat_format`` per configuration (None: the GGUF's own template).
SERVER_FORMATS: dict[str, str | None] = {"server": None,
                                         "server-chatml-fc": "chatml-function-calling"}
DEFAULT_CONFIGS = ["bundled", "server"]


def _bundled(**options: Any) -> Callable[[], LLM]:
    def make() -> LLM:
        from desktop_app.core.llm.bundled import ensure_bundled_model
        from desktop_app.core.llm.factory import prompt_state_dir
        from desktop_app.core.llm.llama_cpp_adapter import LlamaCppLLM

        return LlamaCppLLM(ensure_bundled_model(), name="qwen2.5-coder-0.5b",
                           context_size=8192, prompt_cache_dir=prompt_state_dir(), **options)

    return make


async def _run_config(name: str, suite: Any) -> list[Summary]:
    if name in SERVER_FORMATS:
        return await _run_on_server(name, suite)
    if name == "bundled-json":
        llm: LLM = _bundled(native_tools=False, constrained_json=True)()
    else:
        llm = _bundled()()
    return await _run(name, llm, suite)


async def _run_on_server(name: str, suite: Any) -> list[Summary]:
    """``name`` on a server of its own (two threads, as the bundled model gets)."""
    sys.path.insert(0, str(ROOT / "tests"))
    from fixtures_server import _start, _stop  # the tests' loopback server

    from desktop_app.core.llm.bundled import ensure_bundled_model
    from desktop_app.core.llm.openai_adapter import OpenAICompatibleLLM

    log = Path(tempfile.mkdtemp()) / "server.log"
    server = _start(ensure_bundled_model(), log, chat_format=SERVER_FORMATS[name], threads=2)
    try:
        llm = OpenAICompatibleLLM(base_url=server.base_url, model=server.model,
                                  name=f"{name} (native tools)", context_size=4096)
        return await _run(name, llm, suite)
    finally:
        _stop(server.process)


async def _run(name: str, llm: LLM, suite: Any) -> list[Summary]:
    print(f"== {name}: {len(suite.tasks)} tasks", file=sys.stderr, flush=True)
    try:
        results = await run_suite(suite, react_runner(llm), on_result=lambda r: print(
            result_line(r), file=sys.stderr, flush=True))
    finally:
        await llm.aclose()
    return Summary.by_split(name, results)


async def main(configs: list[str], categories: list[str] | None, as_json: bool,
               save: Path | None = None, split: str = "all",
               languages: list[str] | None = None) -> int:
    suite = load_suite().select(categories, split=None if split == "all" else split,
                                languages=languages)
    summaries = [part for name in configs for part in await _run_config(name, suite)]
    if save is not None:
        save.write_text(json.dumps([s.to_dict() for s in summaries], indent=1))
    if as_json:
        print(json.dumps([s.to_dict() for s in summaries], indent=1))
    else:
        print(scoreboard(summaries, suite.categories()))
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--config", action="append", choices=CONFIGS,
                        help="configurations to run (default: bundled and server)")
    parser.add_argument("--split", choices=("dev", "heldout", "all"), default="all")
    parser.add_argument("--category", "-c", action="append", help="only these categories")
    parser.add_argument("--language", action="append", help="only requests in these languages")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--save", type=Path, help="also write the summaries as JSON here")
    args = parser.parse_args()
    raise SystemExit(asyncio.run(main(args.config or DEFAULT_CONFIGS, args.category, args.json,
                                      args.save, args.split, args.language)))
