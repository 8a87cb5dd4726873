"""``desktop-app ask "question"``: one agent run in the terminal, same engine as the window.

The answer streams to stdout; tool steps and the footer go to stderr so the answer can be
piped. ``--events`` prints the raw SSE event stream instead (what the UI consumes).
The run itself is chosen in ``_run``; other run kinds (e.g. a DAG mode) plug in there.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from typing import Any, TextIO

from desktop_app.cli.common import (
    add_model_argument,
    add_prompt_arguments,
    make_confirmer,
    make_share_gate,
    read_prompt,
)
from desktop_app.core.agent import (
    AnswerDelta,
    Compact,
    Done,
    ErrorEvent,
    Event,
    Inject,
    IterationDone,
    IterationStart,
    Notice,
    Phase,
    ReActAgent,
    drive_run,
    encode_sse,
)
from desktop_app.core.agent.factory import MAX_ITERATIONS_LOCAL
from desktop_app.core.agent.react import DEFAULT_MAX_ITERATIONS
from desktop_app.core.config.settings import Settings, load_settings
from desktop_app.core.llm.base import LLM
from desktop_app.core.llm.factory import build_registry
from desktop_app.core.tools.base import ToolRegistry
from desktop_app.core.tools.builtin import default_tools
from desktop_app.core.tools.toolbox import Toolbox


def register(subparsers: Any) -> None:
    """Add the ``ask`` subcommand."""
    parser = subparsers.add_parser(
        "ask", help="ask the agent one question (answer streams to stdout)",
        description="Run the agent with the built-in tools on one question.")
    add_prompt_arguments(parser)
    add_model_argument(parser)
    parser.add_argument("--events", action="store_true",
                        help="print the Server-Sent Events stream instead of the answer")
    parser.add_argument("--max-iterations", type=int, default=None, metavar="N",
                        help=("stop the tool loop after N iterations (default: "
                              f"{MAX_ITERATIONS_LOCAL} on a local model, "
                              f"{DEFAULT_MAX_ITERATIONS} on a hosted one)"))
    parser.add_argument("--json-mode", action="store_true",
                        help="use JSON mode even if the model supports native tool calls")
    parser.add_argument("--temperature", type=float, default=None, metavar="T",
                        help="sampling temperature for every call (default: the model's)")
    parser.add_argument("--yes", "-y", action="store_true",
                        help="run tools that change things without asking for confirmation")
    parser.add_argument("--assistant", metavar="NAME",
                        help="answer as this assistant (system prompt, tools, temperature, "
                             "context; see the window's Assistants)")
    parser.add_argument("--docs", action="append", metavar="COLLECTION", default=[],
                        help="search this document collection for the question and cite it "
                             "(repeatable; see 'desktop-app docs')")
    parser.add_argument("--dag", action="store_true",
                        help="DAG mode: plan the goal as steps that run in parallel, each on "
                             "the model that suits it, then answer from their results")
    parser.set_defaults(func=run_ask)


def run_ask(args: argparse.Namespace) -> int:
    args.prompt_text = read_prompt(args)  # before any model loads: fail fast when empty
    return asyncio.run(_ask(args))


class TerminalPrinter:
    """Renders run events: the answer to ``out``, progress and errors to ``err``."""

    def __init__(self, *, events: bool, out: TextIO | None = None,
                 err: TextIO | None = None) -> None:
        self.events = events
        self.out = out or sys.stdout
        self.err = err or sys.stderr
        self.answer_started = False

    def __call__(self, event: Event) -> None:
        if self.events:
            self.out.write(encode_sse(event))
            self.out.flush()
            return
        if isinstance(event, AnswerDelta):
            self.out.write(event.content)
            self.out.flush()
            self.answer_started = True
        elif isinstance(event, IterationStart):
            args = json.dumps(event.tool_args, ensure_ascii=False)
            self._note(f"· {event.tool_name} {args[:200]}")
        elif isinstance(event, IterationDone):
            text = event.error and f"error: {event.error}" or event.observation
            self._note(f"  → {' '.join(text.split())[:200]}")
        elif isinstance(event, Phase):
            self._note(f"· choosing from {event.total_tools} tools…")
        elif isinstance(event, Compact):
            if event.question_tokens:
                self._note(f"· your message is too long for this model's context: only the "
                           f"first {event.question_kept_tokens:,} of its "
                           f"{event.question_tokens:,} tokens were used")
            if event.original_messages != event.kept_messages:
                self._note(f"· context compacted ({event.original_messages} → "
                           f"{event.kept_messages} messages)")
        elif isinstance(event, Inject):
            self._note(f"· interrupt: {event.content}")
        elif isinstance(event, ErrorEvent):
            self._note(f"error: {event.message}")
        elif isinstance(event, Notice):
            self._note(f"note: {event.message}")
        elif isinstance(event, Done):
            if self.answer_started:
                self.out.write("\n")
                self.out.flush()
            status = "cancelled" if event.cancelled else ("failed" if event.error else "done")
            self._note(f"[{status}: {event.iterations} iteration(s), "
                       f"{event.usage.total_tokens} tokens, {event.elapsed:.1f} s, "
                       f"{event.model}]")

    def _note(self, line: str) -> None:
        print(line, file=self.err, flush=True)


def build_agent(llm: LLM, settings: Settings, args: argparse.Namespace,
                tools: ToolRegistry | None = None) -> ReActAgent:
    """The agent ``ask`` runs: built-in (and MCP) tools, a context guard, terminal
    confirmation."""
    from desktop_app.core.agent.factory import make_agent

    options: dict[str, Any] = {"tool_timeout": settings.tools.timeout_seconds}
    tools = tools if tools is not None else ToolRegistry(default_tools(settings))
    if getattr(args, "assistant", None):
        from desktop_app.core.assistants import (
            ChatOptions,
            agent_options,
            all_assistants,
            tools_for,
        )
        from desktop_app.core.errors import ConfigError

        chosen = next((a for a in all_assistants(settings) if a.name == args.assistant), None)
        if chosen is None:
            names = ", ".join(a.name for a in all_assistants(settings))
            raise ConfigError(f"There is no assistant named '{args.assistant}'.",
                              hint=f"Assistants: {names}.")
        tools = tools_for(chosen, tools)
        options.update(agent_options(chosen, ChatOptions(), llm))
    if args.max_iterations:
        options["max_iterations"] = args.max_iterations
    if args.temperature is not None:
        options["temperature"] = args.temperature
    return make_agent(llm, tools, use_native_tools=not args.json_mode,
                      confirm=make_confirmer(settings, assume_yes=args.yes),
                      share=make_share_gate(assume_yes=args.yes), **options)


async def _run(args: argparse.Namespace, llm: LLM, settings: Settings,
               printer: TerminalPrinter, tools: ToolRegistry | None = None) -> int:
    """One run; returns the exit code. New run kinds branch here on their flag."""
    agent = build_agent(llm, settings, args, tools)
    outcome = await drive_run(agent, args.prompt_text, emit=printer)
    return 0 if outcome.error is None else 1


async def _ask(args: argparse.Namespace) -> int:
    settings = load_settings()
    registry = build_registry(settings)
    printer = TerminalPrinter(events=args.events)
    toolbox = Toolbox(settings)
    library = None
    try:
        if getattr(args, "docs", None):
            from desktop_app.core.documents import DocumentLibrary

            library = DocumentLibrary()
            for name in args.docs:
                library.collection(name)  # a clear error before any model loads
        # Configured MCP servers come up for this one question and stop with it.
        for server, error in (await toolbox.start()).items():
            if error:
                print(f"· MCP server '{server}' is unavailable: {error}", file=sys.stderr)
        tools = toolbox.registry()
        if library is not None:
            from desktop_app.core.tools.builtin.search_documents import with_documents

            tools = with_documents(tools, library, args.docs)
        if getattr(args, "dag", False):
            from desktop_app.cli._dag import run_dag_goal

            return await run_dag_goal(args, registry, settings, printer, tools)
        llm = registry.get(registry.resolve(args.model))
        return await _run(args, llm, settings, printer, tools)
    finally:
        if library is not None:
            library.close()
        await toolbox.aclose()
        await registry.aclose()
