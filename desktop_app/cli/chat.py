"""``desktop-app chat "question"``: one plain model answer, streamed token by token.

No agent and no tools: the fastest way to check that a model works. The answer goes to
stdout as it is produced; setup progress (assembling the bundled model on first use,
loading it) goes to stderr. Ctrl-C stops generation at once and exits with status 130.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path
from typing import Any, TextIO

from desktop_app.cli.common import (
    add_model_argument,
    add_prompt_arguments,
    load_registry,
    read_prompt,
)
from desktop_app.core.errors import LLMBadOutputError
from desktop_app.core.llm.registry import ModelRegistry
from desktop_app.core.llm.types import ChatMessage, Usage


def register(subparsers: Any) -> None:
    """Add the ``chat`` subcommand."""
    parser = subparsers.add_parser(
        "chat", help="ask a model directly (answer streams to stdout, no tools)",
        description="Send one message to a model and stream its answer to stdout.")
    add_prompt_arguments(parser, "message")
    add_model_argument(parser)
    parser.add_argument("--system", metavar="TEXT", help="a system prompt")
    parser.add_argument("--max-tokens", type=int, default=None, metavar="N",
                        help="stop the answer after N tokens")
    parser.add_argument("--temperature", type=float, default=None, metavar="T",
                        help="sampling temperature (default: the model's)")
    parser.add_argument("--voice-out", type=Path, metavar="FILE.wav",
                        help="also read the answer aloud into this WAV file (offline voice)")
    parser.add_argument("--stats", action="store_true",
                        help="print token usage and speed to stderr afterwards")
    parser.set_defaults(func=run_chat)


class ProgressLine:
    """``label: NN%`` on stderr; redrawn in place on a terminal, a few lines otherwise."""

    def __init__(self, label: str, stream: TextIO | None = None) -> None:
        self.label = label
        self.stream = stream or sys.stderr
        self.tty = self.stream.isatty()
        self._last = -1

    def __call__(self, done: int, total: int) -> None:
        percent = 100 * done // total if total else 100
        step = 1 if self.tty else 25  # a log file gets 25/50/75/100, not a hundred lines
        if percent // step == self._last:
            return
        self._last = percent // step
        end = "\r" if self.tty and percent < 100 else "\n"
        self.stream.write(f"{self.label}: {percent}%{end}")
        self.stream.flush()


def _prepare_bundled(registry: ModelRegistry, name: str) -> None:
    """Assemble the bundled model with visible progress before the registry builds it."""
    if registry.entry(name).kind != "bundled":
        return
    from desktop_app.core.llm.bundled import ensure_bundled_model, is_bundled_model_ready

    if not is_bundled_model_ready():
        ensure_bundled_model(ProgressLine("Setting up the bundled model (first use only)"))


async def _chat(args: argparse.Namespace) -> int:
    prompt = read_prompt(args, "message")  # before any model loads: fail fast when empty
    registry = load_registry()
    name = registry.resolve(args.model)
    _prepare_bundled(registry, name)
    llm = registry.get(name)
    out = sys.stdout
    try:
        load = getattr(llm, "load", None)
        if load is not None and not getattr(llm, "loaded", True):
            sys.stderr.write(f"Loading {name}...\n")
            sys.stderr.flush()
            await load()
        messages = ([ChatMessage.system(args.system)] if args.system else [])
        messages.append(ChatMessage.user(prompt))
        usage: Usage | None = None
        started = time.perf_counter()
        wrote = False
        answer: list[str] = []
        async for chunk in llm.stream_chat(messages, max_tokens=args.max_tokens,
                                           temperature=args.temperature):
            if chunk.content:
                out.write(chunk.content)
                out.flush()
                answer.append(chunk.content)
                wrote = wrote or bool(chunk.content.strip())
            usage = chunk.usage or usage
        out.write("\n")
        out.flush()
        if not wrote:  # never report an empty answer as a success
            raise LLMBadOutputError(f"The model '{name}' gave an empty answer.",
                                    hint="Try again, rephrase the message, or pick another "
                                         "model.")
        if args.voice_out is not None:
            from desktop_app.core.voice import synthesize

            path = await asyncio.to_thread(synthesize, "".join(answer), args.voice_out)
            sys.stderr.write(f"Read aloud into {path}\n")
        if args.stats and usage is not None:
            seconds = time.perf_counter() - started
            sys.stderr.write(f"[{name}: {usage.prompt_tokens} prompt + {usage.completion_tokens} "
                             f"completion tokens in {seconds:.1f} s]\n")
        return 0
    finally:
        # Runs on Ctrl-C too (the task is cancelled): stops generation, frees the model.
        await registry.aclose()


def run_chat(args: argparse.Namespace) -> int:
    try:
        return asyncio.run(_chat(args))
    except BrokenPipeError:  # `desktop-app chat ... | head`: the reader left, not an error
        return 0
