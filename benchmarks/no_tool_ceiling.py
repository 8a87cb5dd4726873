"""How much of the no-tool targets the model itself can reach: each suite question that
needs no tool, asked of the bare bundled model as plain chat (no tools, no system turn of
ours, greedy — the route the small-model policy's ``reply`` takes), judged by the eval's
own checks. The agent cannot answer better than this without a better model.

    .venv/bin/python benchmarks/no_tool_ceiling.py [--split dev|heldout]

About 40 s for the dev split and 7 minutes for the held-out split on 2 cores.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", choices=("dev", "heldout"), default="dev")
    parser.add_argument("--verbose", "-v", action="store_true", help="print every answer")
    args = parser.parse_args()
    from llama_cpp import Llama

    from desktop_app.core.agent.factory import TEMPERATURE_LOCAL
    from desktop_app.core.evals.runner import judge, make_world
    from desktop_app.core.evals.suite import load_suite
    from desktop_app.core.llm.bundled import ensure_bundled_model

    suite = load_suite()
    tasks = [t for t in suite.select(None, split=args.split).tasks if not t.needs_tool]
    model = Llama(str(ensure_bundled_model()), n_ctx=4096, verbose=False)
    scores: dict[tuple[str, str], list[int]] = {}
    started = time.perf_counter()
    for task in tasks:
        world = make_world(suite, task=task)
        reply = model.create_chat_completion([{"role": "user", "content": task.prompt}],
                                             temperature=TEMPERATURE_LOCAL, max_tokens=700)
        answer = reply["choices"][0]["message"]["content"] or ""
        passed, why = judge(task, answer, [], world, None)
        key = (task.kind, task.language)
        scores.setdefault(key, [0, 0])
        scores[key][0] += int(passed)
        scores[key][1] += 1
        if args.verbose:
            print(f"{'PASS' if passed else 'FAIL'} {task.id} {why[:80]} | "
                  f"{answer[:90]!r}")
    print(f"{'kind':14}{'language':10}{'right':>10}")
    for (kind, language), (right, total) in sorted(scores.items()):
        print(f"{kind:14}{language:10}{right:>5}/{total:<4} ({100 * right / total:.0f} %)")
    print(f"{time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
