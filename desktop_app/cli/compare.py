"""``desktop-app compare "prompt" -m local -m hosted``: one prompt, several models, measured."""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import Any

from desktop_app.core.agent.factory import make_agent
from desktop_app.core.agent.react import ReActAgent
from desktop_app.core.compare import CompareTarget, compare_models, format_table
from desktop_app.core.config.settings import load_settings
from desktop_app.core.llm.base import LLM
from desktop_app.core.llm.factory import build_registry
from desktop_app.core.tools.base import Change, ToolRegistry
from desktop_app.core.tools.builtin import default_tools


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "compare", help="run one prompt on several models and compare speed and answers",
        description="Run the same prompt through the agent on each model; print time to first "
                    "token, total time, tokens, tokens/s, tool calls and every answer.")
    parser.add_argument("prompt", nargs="+", help="the prompt (quote it)")
    parser.add_argument("--model", "-m", action="append", required=True, metavar="NAME",
                        help="a model name or role; repeat for each model to compare")
    parser.add_argument("--max-iterations", type=int, default=10, metavar="N",
                        help="tool-loop limit per model (default 10)")
    parser.set_defaults(func=run_compare)


def run_compare(args: argparse.Namespace) -> int:
    return asyncio.run(_compare(args))


async def _compare(args: argparse.Namespace) -> int:
    settings = load_settings()
    registry = build_registry(settings)
    tools = default_tools(settings)

    async def deny(tool_name: str, tool_args: dict[str, Any], change: Change | None) -> bool:
        # A comparison runs unattended: tools that change things are never run.
        return False

    def agent_for(llm: LLM) -> ReActAgent:
        return make_agent(llm, ToolRegistry(tools), max_iterations=args.max_iterations,
                          confirm=deny)  # files stay from hosted models (make_agent)

    try:
        targets = []
        for name_or_role in args.model:
            name = registry.resolve(name_or_role)
            local = registry.entry(name).kind in ("bundled", "local")
            targets.append(CompareTarget(name=name, llm=registry.get(name), local=local))
        print(f"comparing {len(targets)} model(s)…", file=sys.stderr, flush=True)
        rows = await compare_models(" ".join(args.prompt), targets, agent_for)
    finally:
        await registry.aclose()
    print(format_table(rows))
    for row in rows:
        print(f"\n## {row.name} ({row.model_id})\n")
        print(f"error: {row.error}" if row.error else row.answer.strip())
    return 0 if all(r.error is None for r in rows) else 1
