"""Consent before the user's own content goes to a model on another computer (issue 25).

A tool that reads the user's files or notes (``Tool.reads_private``) hands its result to
the model, and a hosted model's provider receives it with the next request. The first
time in a conversation that such a call would run for a model on another computer, the
user is told what and where and chooses: allow for this chat, or keep local. The answer
holds for the rest of the conversation (the window keeps it with the chat). Models on
this computer (in-process, or a server on localhost) need no consent: nothing leaves.

Documents the user attached to a chat are not asked about: attaching them was the ask.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, TextIO

from desktop_app.core.tools.confirmation import describe_call, share_question

#: ``ask(destination, tool_name, args) -> allowed`` — how the user is asked.
AskFn = Callable[[str, str, dict[str, Any]], Awaitable[bool]]


def kept_local_notice(tool_name: str) -> str:
    """What the model is told when the user kept their content local."""
    return (f"The user keeps their files and notes on their own computer in this chat, so "
            f"{tool_name} did not run and nothing was sent. Answer without that content, "
            "and say that it was not shared if the answer needed it.")


class ShareConsent:
    """The once-per-conversation choice for one destination.

    ``decided``: an answer given earlier in the conversation (None: not asked yet);
    ``on_decided`` is called with the answer the first time the user gives one.
    """

    def __init__(self, destination: str, ask: AskFn, *, decided: bool | None = None,
                 on_decided: Callable[[bool], object] | None = None) -> None:
        self.destination = destination
        self.decision = decided
        self._ask = ask
        self._on_decided = on_decided

    async def __call__(self, tool_name: str, args: dict[str, Any]) -> bool:
        if self.decision is None:
            self.decision = bool(await self._ask(self.destination, tool_name, args))
            if self._on_decided is not None:
                outcome = self._on_decided(self.decision)
                if isinstance(outcome, Awaitable):
                    await outcome
        return self.decision


def remote_destination(llm: object) -> str | None:
    """The host a model's requests go to when that is another computer, else None (an
    in-process model, a server on localhost)."""
    from desktop_app.core import egress

    base_url = getattr(llm, "base_url", None)
    if not isinstance(base_url, str) or not base_url:
        return None
    from urllib.parse import urlsplit

    host = urlsplit(base_url).hostname or base_url
    return None if egress.is_local_host(host) else host


def terminal_ask(*, stdin: TextIO | None = None, stdout: TextIO | None = None,
                 interactive: bool | None = None) -> AskFn:
    """Ask on the terminal; when nobody can answer (stdin is not a terminal), keep the
    content local and say how to allow it."""

    def ask_now(destination: str, tool_name: str, args: dict[str, Any]) -> bool:
        source, out = stdin or sys.stdin, stdout or sys.stderr
        tty = interactive if interactive is not None else _isatty(source)
        if not tty:
            out.write(f"Kept local: {tool_name} would send your files or notes to "
                      f"{destination}, and stdin is not a terminal, so I cannot ask. Run "
                      "interactively, or pass --yes to allow it.\n")
            out.flush()
            return False
        out.write(f"\n{share_question(destination, tool_name, args)}\n"
                  f"{describe_call(tool_name, args)}\n")
        for _ in range(5):
            out.write("Send it? [y]es, for this run / [n]o, keep it local: ")
            out.flush()
            reply = source.readline()
            if not reply:
                out.write("\n(no answer: kept local)\n")
                return False
            if reply.strip().lower() in ("y", "yes"):
                return True
            if reply.strip().lower() in ("n", "no", ""):
                return False
            out.write("Please answer y or n.\n")
        return False

    async def ask(destination: str, tool_name: str, args: dict[str, Any]) -> bool:
        return await asyncio.to_thread(ask_now, destination, tool_name, args)

    return ask


def _isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


class ShareGates:
    """The consents of one conversation (or one command), one per host its models send to:
    allowing one provider allows no other."""

    def __init__(self, ask: AskFn, *, decided: Mapping[str, bool] | None = None,
                 on_decided: Callable[[str, bool], object] | None = None) -> None:
        self._ask = ask
        self._decided = dict(decided or {})
        self._on_decided = on_decided
        self._gates: dict[str, ShareConsent] = {}

    def for_llm(self, llm: object) -> ShareConsent | None:
        destination = remote_destination(llm)
        if destination is None:
            return None
        if destination not in self._gates:
            def remember(allowed: bool, host: str = destination) -> object:
                return None if self._on_decided is None else self._on_decided(host, allowed)

            self._gates[destination] = ShareConsent(
                destination, self._ask, decided=self._decided.get(destination),
                on_decided=remember)
        return self._gates[destination]


def gate_for(llm: object, share: object) -> Any:
    """The consent a run of ``llm`` asks before a tool reads the user's content: None for a
    model on this computer; the one ``share`` holds for its host; and where nobody was
    asked about that host (no gate given, or one for another host), kept local."""
    destination = remote_destination(llm)
    if destination is None:
        return None
    if isinstance(share, ShareGates):
        return share.for_llm(llm)
    if isinstance(share, ShareConsent):
        return share if share.destination == destination else kept_local_for(llm)
    return share if share is not None else kept_local_for(llm)


def kept_local_for(llm: object) -> ShareConsent | None:
    """For runs nobody answers questions in: a model on another computer gets none of the
    user's files or notes; None for a model on this computer."""
    destination = remote_destination(llm)
    if destination is None:
        return None

    async def never(_destination: str, _tool: str, _args: dict[str, Any]) -> bool:
        return False

    return ShareConsent(destination, never, decided=False)
