"""``desktop-app eval``: run the task suite on one or more models and print the scoreboard.

Progress (one line per task) goes to stderr, the table (or ``--json``) to stdout. Every
model's run is saved in the store, so ``desktop-app eval --history`` shows how models and
versions compare over time.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from typing import Any

from desktop_app.core.errors import ConfigError


def register(subparsers: Any) -> None:
    """Add the ``eval`` subcommand."""
    parser = subparsers.add_parser(
        "eval", help="measure models on a suite of everyday tasks",
        description="Run the evaluation suite (built-in: resources/eval/everyday.json) on "
                    "each --model and print pass rates per category, time and tokens.")
    parser.add_argument("--model", "-m", action="append", metavar="NAME",
                        help="model name or role; repeat to compare models (default: the "
                             "default model)")
    parser.add_argument("--suite", metavar="FILE", help="a suite file (JSON) instead of the "
                                                        "built-in one")
    parser.add_argument("--mode", choices=("react", "dag"), default="react",
                        help="run each task as a ReAct run (default) or as a DAG plan")
    parser.add_argument("--category", "-c", action="append", metavar="NAME",
                        help="only this category (repeatable)")
    parser.add_argument("--task", "-t", action="append", metavar="ID",
                        help="only this task (repeatable)")
    parser.add_argument("--split", choices=("dev", "heldout", "all"), default="all",
                        help="dev: the tasks the agent may be tuned on; heldout: rewordings, "
                             "near-misses and other languages it never is; all (default): "
                             "both, reported side by side")
    parser.add_argument("--language", "-l", action="append", metavar="CODE",
                        help="only requests in this language (en, de, es, fr; repeatable)")
    parser.add_argument("--json", action="store_true", help="print results as JSON")
    parser.add_argument("--no-save", action="store_true", help="do not store the results")
    parser.add_argument("--history", action="store_true",
                        help="list earlier evaluation runs instead of running one")
    parser.add_argument("--agent-option", action="append", default=[], metavar="KEY=VALUE",
                        help="advanced: an agent setting for this run, e.g. "
                             "after_tools=synthesize (JSON values)")
    parser.set_defaults(func=run_eval)


def _agent_options(pairs: list[str]) -> dict[str, Any]:
    options: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"--agent-option {pair!r} is not KEY=VALUE.",
                              hint="For example: --agent-option after_tools=synthesize")
        try:
            options[key.strip()] = json.loads(value)
        except ValueError:
            options[key.strip()] = value
    return options


def run_eval(args: argparse.Namespace) -> int:
    return asyncio.run(_eval(args))


async def _eval(args: argparse.Namespace) -> int:
    from desktop_app.core.store.async_store import AsyncStore

    if args.history:
        async with await AsyncStore.open() as store:
            runs = await store.list_eval_runs()
        if args.json:
            print(json.dumps([r.model_dump(mode="json") for r in runs], indent=1))
        else:
            from desktop_app.core.evals.history import history_table

            print(history_table(runs) if runs else "No evaluation runs yet.")
        return 0

    from desktop_app.cli.chat import _prepare_bundled
    from desktop_app.cli.common import load_registry
    from desktop_app.core.evals import (
        Summary,
        dag_runner,
        load_suite,
        react_runner,
        result_line,
        run_suite,
        scoreboard,
    )

    split = None if args.split == "all" else args.split
    suite = load_suite(args.suite).select(args.category, args.task, split=split,
                                          languages=args.language)
    options = _agent_options(args.agent_option)
    registry = load_registry()
    names = [registry.resolve(m) for m in (args.model or [None])]
    summaries, saved = [], []
    store = None if args.no_save else await AsyncStore.open()
    try:
        for name in names:
            _prepare_bundled(registry, name)
            llm = registry.get(name)
            print(f"== {name}: {len(suite.tasks)} tasks, {args.mode} mode", file=sys.stderr)
            run = (dag_runner(registry, name, **options) if args.mode == "dag"
                   else react_runner(llm, **options))
            results = await run_suite(suite, run, on_result=lambda r: print(
                result_line(r), file=sys.stderr, flush=True))
            summary = Summary.of(name, results)
            summaries.extend(Summary.by_split(name, results))
            if store is not None:
                saved.append(await store.save_eval_run(
                    model=name, mode=args.mode, suite=suite.name, results=results,
                    summary=summary.to_dict(), options=options))
    finally:
        if store is not None:
            await store.aclose()
        await registry.aclose()
    if args.json:
        print(json.dumps({"suite": suite.name, "mode": args.mode,
                          "models": [s.to_dict() for s in summaries],
                          "saved_runs": [r.id for r in saved]}, indent=1))
    else:
        print(scoreboard(summaries, suite.categories()))
    return 0
