"""Asking the user before a tool changes something.

The engine takes ``confirm: async (tool_name, args) -> bool`` and calls it before running any
tool whose ``read_only`` is False; a denial becomes an error observation. This module
supplies that callable in two flavours:

* ``Confirmer`` — for the UI (or any event consumer): emits a ``Confirm`` event into the
  run's event stream and waits until ``answer(request_id, allow, always)`` is called.
* ``TerminalConfirmer`` — for the CLI: asks "y/n/a" on the terminal, and denies (saying
  why) when stdin is not a terminal, so a piped or scripted run never hangs.

"Always for this tool" is remembered in ``settings.tools.always_allow`` and saved, so the
next run (and the next app start) does not ask again for that tool — except for a call
that destroys something (``Change.destroys``: replacing a file's content), which is asked
about every time.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
import sys
import threading
import uuid
from collections.abc import Awaitable, Callable
from typing import Any, Literal, TextIO

from desktop_app.core.config.settings import Settings, update_saved_settings
from desktop_app.core.errors import DesktopAppError
from desktop_app.core.events.run import Confirm, Event
from desktop_app.core.tools.base import Change

log = logging.getLogger(__name__)

ConfirmFn = Callable[[str, dict[str, Any], Change | None], Awaitable[bool]]
EmitFn = Callable[[Event], Any]


def _save_always_allowed(tool_name: str) -> None:
    def allow(stored: Settings) -> bool:
        if tool_name in stored.tools.always_allow:
            return False
        stored.tools.always_allow.append(tool_name)
        return True

    update_saved_settings(allow)


def _save_in_background(tool_name: str) -> None:
    try:
        _save_always_allowed(tool_name)
    except DesktopAppError as exc:  # held in memory for this session; the log says why
        log.warning("'always allow %s' was not saved: %s", tool_name, exc)


class AlwaysAllowList:
    """The tools the user allowed for good; persisted in settings when ``persist`` is set."""

    def __init__(self, settings: Settings | None = None, *, persist: bool = True,
                 background: bool = False) -> None:
        self._settings = settings
        self._persist = persist and settings is not None
        #: Write settings.json on a thread of its own (the window: the answer arrives on
        #: its thread); the terminal writes at once.
        self._background = background
        self._names: set[str] = set(settings.tools.always_allow) if settings else set()
        #: The thread writing the last addition to settings.json (None: none yet).
        self.saving: threading.Thread | None = None

    def __contains__(self, tool_name: object) -> bool:
        return tool_name in self._names

    def covers(self, tool_name: str, change: Change | None) -> bool:
        """The call runs without asking: the tool is always allowed and destroys nothing."""
        return tool_name in self._names and not (change is not None and change.destroys)

    def add(self, tool_name: str) -> None:
        if tool_name in self._names:
            return
        self._names.add(tool_name)
        if self._settings is not None:
            self._settings.tools.always_allow.append(tool_name)
        if self._persist and not self._background:
            _save_always_allowed(tool_name)
        elif self._persist:
            # Not a daemon: a write under way when the app quits is finished first.
            self.saving = threading.Thread(target=_save_in_background, args=(tool_name,),
                                           name="always-allow")
            self.saving.start()


class Confirmer:
    """Turns the engine's confirm callable into ``Confirm`` events answered by the UI.

    ``emit`` receives each ``Confirm`` event (sync or async callable, e.g. the run's
    ``on_event``). ``timeout`` (seconds, None = wait for ever) denies an unanswered request,
    so a run never waits on a window that was closed.
    """

    def __init__(self, emit: EmitFn | None = None, *, settings: Settings | None = None,
                 always: AlwaysAllowList | None = None, timeout: float | None = None) -> None:
        self.emit = emit
        self.always = always if always is not None else AlwaysAllowList(settings,
                                                                        background=True)
        self.timeout = timeout
        self._pending: dict[str, tuple[str, asyncio.Future[tuple[bool, bool]]]] = {}

    @property
    def pending(self) -> list[str]:
        """Request ids still waiting for an answer."""
        return list(self._pending)

    async def __call__(self, tool_name: str, args: dict[str, Any],
                       change: Change | None = None) -> bool:
        if self.always.covers(tool_name, change):
            return True
        return await self._question(tool_name, args, change)

    async def ask_share(self, destination: str, tool_name: str, args: dict[str, Any]) -> bool:
        """May the user's files or notes go to ``destination`` (``core/tools/sharing``)?
        Asked like a confirmation; "always" does not apply (the chat keeps the answer)."""
        question = Change(summary=share_question(destination, tool_name, args), destroys=True)
        return await self._question(tool_name, args, question, kind="share")

    async def _question(self, tool_name: str, args: dict[str, Any], change: Change | None,
                        kind: Literal["run", "share"] = "run") -> bool:
        request_id = uuid.uuid4().hex
        future: asyncio.Future[tuple[bool, bool]] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = (tool_name, future)
        try:
            if self.emit is not None:
                event = Confirm(request_id=request_id, tool_name=tool_name, tool_args=args,
                                change=change.summary if change else None,
                                destroys=bool(change and change.destroys), kind=kind)
                result = self.emit(event)
                if inspect.isawaitable(result):
                    await result
            try:
                allow, always = await asyncio.wait_for(asyncio.shield(future), self.timeout)
            except TimeoutError:
                return False
        finally:
            self._pending.pop(request_id, None)
        if allow and always:
            self.always.add(tool_name)
        return allow

    def answer(self, request_id: str, allow: bool, always: bool = False) -> bool:
        """The user's answer to one ``Confirm`` event. False if the request is unknown/over."""
        entry = self._pending.get(request_id)
        if entry is None or entry[1].done():
            return False
        entry[1].set_result((bool(allow), bool(always and allow)))
        return True

    def deny_all(self) -> None:
        """Deny every open request (the run was stopped or the window closed)."""
        for _, future in list(self._pending.values()):
            if not future.done():
                future.set_result((False, False))


def describe_call(tool_name: str, args: dict[str, Any]) -> str:
    """A tool call as the person asked to allow it should read it: every argument whole
    (nothing cut: a harmful line late in a script must be seen), text of several lines
    (code, file content) shown as its lines rather than as one escaped JSON string."""
    lines = [tool_name]
    for key, value in args.items():
        if isinstance(value, str) and "\n" in value:
            body = "\n".join(f"    {line}" for line in value.splitlines())
            lines.append(f"  {key}:\n{body}")
        else:
            lines.append(f"  {key}: {json.dumps(value, ensure_ascii=False)}")
    return "\n".join(lines)


def share_question(destination: str, tool_name: str, args: dict[str, Any]) -> str:
    """The question, in the user's words: what would be sent, and where (the call itself
    is shown beside it)."""
    return (f"This chat's model runs on {destination}. To answer, it wants to use "
            f"{tool_name}, which would send content from this computer (your files or "
            f"notes) to {destination}. Allow that for the rest of this chat, or keep your "
            "content on this computer?")


class TerminalConfirmer:
    """Asks on the terminal: ``[y]es / [n]o / [a]lways for this tool``.

    When stdin is not a terminal (a pipe, a script, CI) it cannot ask, so it denies and
    prints why and how to allow the tool instead.
    """

    def __init__(self, *, settings: Settings | None = None, always: AlwaysAllowList | None = None,
                 stdin: TextIO | None = None, stdout: TextIO | None = None,
                 interactive: bool | None = None) -> None:
        self.always = always if always is not None else AlwaysAllowList(settings)
        self._stdin = stdin
        self._stdout = stdout
        self._interactive = interactive
        self._lock = asyncio.Lock()  # parallel tool calls ask one after the other

    @property
    def stdin(self) -> TextIO:
        return self._stdin or sys.stdin

    @property
    def stdout(self) -> TextIO:
        return self._stdout or sys.stderr

    def _is_tty(self) -> bool:
        if self._interactive is not None:
            return self._interactive
        try:
            return self.stdin.isatty()
        except (AttributeError, ValueError):
            return False

    async def __call__(self, tool_name: str, args: dict[str, Any],
                       change: Change | None = None) -> bool:
        if self.always.covers(tool_name, change):
            return True
        async with self._lock:
            if self.always.covers(tool_name, change):  # answered "always" while we waited
                return True
            if not self._is_tty():
                self.stdout.write(
                    f"Denied '{tool_name}': it changes something and needs your confirmation, "
                    f"but stdin is not a terminal, so I cannot ask. Run interactively, or add "
                    f"'{tool_name}' to tools.always_allow in the settings.\n")
                self.stdout.flush()
                return False
            return await asyncio.to_thread(self._ask, tool_name, args, change)

    def _ask(self, tool_name: str, args: dict[str, Any], change: Change | None) -> bool:
        self.stdout.write(f"\nThe assistant wants to run:\n{describe_call(tool_name, args)}\n")
        if change is not None:
            self.stdout.write(f"{change.summary}\n")
        for _ in range(5):
            self.stdout.write("Allow? [y]es / [n]o / [a]lways for this tool: ")
            self.stdout.flush()
            line = self.stdin.readline()
            if not line:  # end of input: nobody is there to say yes
                self.stdout.write("\n(no answer: denied)\n")
                return False
            reply = line.strip().lower()
            if reply in ("y", "yes"):
                return True
            if reply in ("n", "no", ""):
                return False
            if reply in ("a", "always"):
                self.always.add(tool_name)
                return True
            self.stdout.write("Please answer y, n or a.\n")
        return False
