"""Running one tool call safely: decode and validate arguments, confirm, run, observe.

Nothing here raises for a bad call. Unknown tools, arguments that are a string, a list or
broken JSON, schema violations, a declined confirmation and exceptions inside the tool all
become a ``StepRecord`` with ``error`` set, which the loop shows the model as an observation
so it can correct itself next iteration (SPEC §4). Only cancellation propagates.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any, Literal

from desktop_app.core.agent.arg_repair import checked_arguments
from desktop_app.core.agent.events import Event, IterationDone, IterationStart
from desktop_app.core.agent.prompts import artifact_summary, cut
from desktop_app.core.agent.result import StepRecord
from desktop_app.core.errors import DesktopAppError, ToolError
from desktop_app.core.llm.json_extract import loads_lenient
from desktop_app.core.tools.base import Change, Tool, ToolRegistry, ToolResult
from desktop_app.core.tools.sharing import kept_local_notice

#: ``share(tool_name, args) -> bool``: asked before a tool with ``reads_private`` runs when
#: its result would go to a model on another computer (``core/tools/sharing.py``).
ShareFn = Callable[[str, dict[str, Any]], Awaitable[bool]]
#: ``confirm(tool_name, args, change) -> bool``: asked before a tool with ``read_only = False`` runs.
Confirmer = Callable[[str, dict[str, Any], Change | None], Awaitable[bool]]
Emit = Callable[[Event], Awaitable[None]]


class BadArguments(ValueError):
    """The model's arguments are not a JSON object."""


def decode_args(raw: Any, *, encoded: bool = True) -> dict[str, Any]:
    """The arguments as a dict.

    ``encoded``: ``raw`` is JSON text as a provider sends it (native mode). Otherwise it is
    the already decoded ``args`` value of a JSON-mode action, where a string is accepted
    only if it is the JSON text of an object (small models double-encode).
    """
    value = raw
    for round_no in range(2):  # a JSON object encoded as a JSON string is unwrapped once
        if value is None:
            return {}
        if isinstance(value, dict):
            return value
        if isinstance(value, str):
            if not value.strip():
                return {}
            if (round_no or not encoded) and not value.lstrip().startswith(("{", "[")):
                break  # a plain string, not JSON text of an object
            try:
                value = loads_lenient(value)
            except ValueError as exc:
                raise BadArguments(f"the arguments are not valid JSON ({exc}): "
                                   f"{cut(value, 200)}") from None
            continue
        break
    kind = {list: "a list", str: "a string", int: "a number", float: "a number",
            bool: "a boolean"}.get(type(value), type(value).__name__)
    raise BadArguments(f"the arguments must be a JSON object, got {kind}: {cut(repr(value), 200)}")


class ToolExecutor:
    """Runs tool calls for one run; emits ``IterationStart``/``IterationDone`` around each."""

    def __init__(self, registry: ToolRegistry, emit: Emit, *, confirm: Confirmer | None = None,
                 max_observation_chars: int = 16_000, timeout: float | None = None,
                 share: ShareFn | None = None) -> None:
        self.registry = registry
        self.timeout = timeout
        self._emit = emit
        self._confirm = confirm
        self._share = share
        self._max_chars = max_observation_chars
        # Parallel native calls may each need confirmation: ask one question at a time.
        self._confirm_lock = asyncio.Lock()

    async def execute(self, name: str, raw_args: Any, *, iteration: int,
                      call_id: str | None = None, encoded: bool = False,
                      origin: Literal["model", "policy"] = "model") -> StepRecord:
        """Run one call; the returned step's ``error`` is set when anything went wrong.

        ``encoded``: ``raw_args`` is provider JSON text (native mode), see ``decode_args``.
        """
        started = time.perf_counter()
        shown_args, checked = self._prepare(name, raw_args, encoded)
        await self._emit(IterationStart(iteration=iteration, tool_name=name,
                                        tool_args=shown_args, call_id=call_id, origin=origin))
        result = await self._run(name, checked)
        text = without_artifact_sources(result.text, result.artifacts)
        if result.artifacts and result.ok and result.confirmation:
            text = result.confirmation  # the tool's words for the user, not its log line
        observation = cut(text, self._max_chars)
        if result.artifacts:
            summary = artifact_summary(result.artifacts)
            observation = f"{observation}\n{summary}" if observation else summary
        tool = self.registry.get(name) if name in self.registry else None
        step = StepRecord(tool=name, args=shown_args, observation=observation, error=result.error,
                          elapsed=time.perf_counter() - started, artifacts=list(result.artifacts),
                          iteration=iteration, call_id=call_id,
                          changed_something=tool is not None and not tool.read_only,
                          confirmation=result.confirmation if result.ok else None,
                          declined=result.declined,
                          computed=tool is not None and tool.pure)
        await self._emit(IterationDone(iteration=iteration, tool_name=name,
                                       observation=observation, error=result.error,
                                       iter_elapsed=step.elapsed, call_id=call_id,
                                       artifacts=step.artifacts))
        return step

    def as_run(self, name: str, raw_args: Any, *, encoded: bool = False) -> Any:
        """The arguments a step of this call would record (``StepRecord.args``), so a new
        call compares with earlier steps like for like."""
        return self._prepare(name, raw_args, encoded)[0]

    def _prepare(self, name: str, raw_args: Any,
                 encoded: bool) -> tuple[Any, dict[str, Any] | ToolResult]:
        """The arguments to show and record (as checked and repaired for running, else as
        decoded, else as sent), and what ``_run`` gets: those arguments or the failure."""
        try:
            args = decode_args(raw_args, encoded=encoded)
        except BadArguments as exc:
            return raw_args, self._check(name, None, f"Invalid arguments for '{name}': {exc}.")
        checked = self._check(name, args, None)
        # The card shows what the tool runs with: a key the model made up beside the real
        # ones ("result": "410.00000000000005") read as if it were the result.
        return (checked if isinstance(checked, dict) else args), checked

    def _check(self, name: str, args: dict[str, Any] | None,
               arg_error: str | None) -> dict[str, Any] | ToolResult:
        """The arguments ``name`` runs with (validated, repaired if almost right), or the
        failure to report."""
        try:
            tool = self.registry.get(name)
        except ToolError as exc:
            return ToolResult.failure(str(exc))
        if arg_error is not None or args is None:
            return ToolResult.failure(f"{arg_error} Expected: {_schema_hint(tool)}")
        try:  # almost right (a stray key, a number as text)? fixed only if it then fits
            return checked_arguments(tool, args)
        except ToolError as exc:
            return ToolResult.failure(exc.message + f" Expected: {_schema_hint(tool)}")

    async def _run(self, name: str, checked: dict[str, Any] | ToolResult) -> ToolResult:
        if isinstance(checked, ToolResult):
            return checked
        tool, args = self.registry.get(name), checked
        if tool.reads_private and self._share is not None:
            async with self._confirm_lock:  # one question at a time
                shared = await self._share(tool.name, args)
            if not shared:
                return ToolResult(error=kept_local_notice(tool.name), declined=True)
        if not tool.read_only and self._confirm is not None:
            declined = await self._ask(tool, args)
            if declined is not None:
                return ToolResult(error=declined, declined=True)
        scope = asyncio.timeout(self.timeout)
        try:
            async with scope:
                result: Any = await tool.run(args)
        except TimeoutError as exc:
            if scope.expired():
                return ToolResult.failure(f"Tool '{name}' did not finish within "
                                          f"{self.timeout:g} s and was stopped.")
            # The tool's own timeout (e.g. a network call inside it), not ours.
            return ToolResult.failure(f"Tool '{name}' failed: it timed out"
                                      + (f" ({exc})." if str(exc) else "."))
        except asyncio.CancelledError:
            raise
        except DesktopAppError as exc:
            return ToolResult.failure(str(exc))
        except Exception as exc:  # noqa: BLE001 - a tool's crash is its result
            return ToolResult.failure(f"Tool '{name}' failed: {type(exc).__name__}: {exc}")
        if isinstance(result, ToolResult):
            return result
        return ToolResult(text="" if result is None else str(result))

    async def _ask(self, tool: Tool, args: dict[str, Any]) -> str | None:
        """None when the user allowed the call, else the error text for the model."""
        assert self._confirm is not None
        async with self._confirm_lock:
            try:
                change = await tool.describe_change(args)
            except (DesktopAppError, OSError, ValueError):
                change = None  # the question shows the arguments alone
            try:
                allowed = await self._confirm(tool.name, args, change)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - the call is skipped, not the run
                return f"Could not ask the user to confirm '{tool.name}' ({exc}); it did not run."
        return None if allowed else f"The user declined to run {tool.name}."


def without_artifact_sources(text: str, artifacts: list[Any]) -> str:
    """``text`` with any artifact's source taken out: the model sees only the summary.

    MCP servers often return a page both as a resource (the artifact) and as a text block;
    without this, up to the observation limit of page source reached the model."""
    rich = [a for a in artifacts if a.is_rich and a.content.strip()]
    for artifact in rich:
        text = text.replace(artifact.content.strip(), "")
    lowered = text.lstrip()[:200].lower()
    if rich and (lowered.startswith(("<!doctype", "<html")) or "<body" in lowered):
        return ""  # a page's source under another form: the artifact shows it
    return text.strip()


def _schema_hint(tool: Tool) -> str:
    props = tool.parameters.get("properties", {})
    required = set(tool.parameters.get("required", []))
    parts = [f"{key}{'' if key in required else '?'}: {spec.get('type', 'any')}"
             for key, spec in props.items() if isinstance(spec, dict)]
    return "{" + ", ".join(parts) + "}"
