"""DAGPlanner: one structured LLM call turns a goal into a validated plan (SPEC §7).

The planner asks for the ``PlanDraft`` schema through ``structured_llm_call`` (native tools,
JSON mode or plain text, whatever the model can do), then validates and repairs the draft.
If the draft is beyond repair (a cycle, duplicate ids, too many steps) the model is shown
exactly what was wrong and asked once more. If planning still fails, the goal becomes a
single-step plan: a run in DAG mode always has something to execute.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from desktop_app.core.dag.plan import (
    MAX_PLAN_STEPS,
    Plan,
    PlanDraft,
    PlanValidationError,
    validate_plan,
)
from desktop_app.core.errors import LLMBadOutputError
from desktop_app.core.llm.types import ChatMessage, Usage

if TYPE_CHECKING:
    from desktop_app.core.llm.base import LLM
    from desktop_app.core.llm.registry import ModelRegistry
    from desktop_app.core.tools.base import ToolRegistry

log = logging.getLogger(__name__)

PLAN_FUNCTION = "submit_plan"

_EXAMPLE = {"steps": [
    {"id": "step_1", "task": "Find the boiling point of water in Fahrenheit.",
     "dependencies": [], "tool_hint": None, "model_hint": "fast"},
    {"id": "step_2", "task": "Find the boiling point of ethanol in Fahrenheit.",
     "dependencies": [], "tool_hint": None, "model_hint": "fast"},
    {"id": "step_3", "task": "Subtract the two boiling points.",
     "dependencies": ["step_1", "step_2"], "tool_hint": "calculator", "model_hint": None},
]}


def model_catalog(registry: ModelRegistry) -> str:
    """One line per model: name, roles and description, for the planner's prompt."""
    roles_by_name: dict[str, list[str]] = {}
    for role, name in registry.roles().items():
        roles_by_name.setdefault(name, []).append(role)
    lines = []
    for entry in registry.entries():
        roles = sorted(set(entry.roles) | set(roles_by_name.get(entry.name, [])))
        line = f"- {entry.name}"
        if roles:
            line += f" (roles: {', '.join(roles)})"
        if entry.description and entry.description != entry.name:
            line += f": {entry.description}"
        lines.append(line)
    return "\n".join(lines)


def known_model_names(registry: ModelRegistry | None) -> set[str] | None:
    """Every name and role a ``model_hint`` may use, or None when any is accepted."""
    if registry is None:
        return None
    return set(registry.names()) | set(registry.roles())


class DAGPlanner:
    """Makes a ``Plan`` for a goal with one model (the planner model)."""

    def __init__(self, llm: LLM, *, models: ModelRegistry | None = None,
                 max_steps: int = MAX_PLAN_STEPS, max_attempts: int = 2,
                 max_tokens: int | None = 1024) -> None:
        self._llm = llm
        self._models = models
        self.max_steps = max_steps
        self.max_attempts = max(1, max_attempts)
        self.max_tokens = max_tokens

    def system_prompt(self, tools: ToolRegistry | None) -> str:
        """The planner's instructions: format, rules, available tools and models."""
        parts = [
            ("You are a planner. Break the user's goal into a short plan of steps that can "
             "run as a dependency graph: steps without dependencies run in parallel."),
            "Rules:",
            (f"- At most {self.max_steps} steps; use fewer when the goal is simple (one step "
             "is fine for a simple goal)."),
            ("- Ids are step_1, step_2, ... Each task is self-contained: the worker that runs "
             "it sees only the goal, its task and the results of its dependencies."),
            ("- dependencies lists the ids of steps whose results the step needs; never the "
             "step itself, never a later step that depends on it (no cycles)."),
            "- tool_hint: the name of a tool the step will likely use, or null.",
            ("- model_hint: a model name or role from the list below, or null for the "
             "default. Prefer a fast model for simple lookups, a stronger one for hard "
             "reasoning."),
        ]
        if tools is not None and len(tools):
            parts += ["", "Tools:", tools.catalog()]
        if self._models is not None and len(self._models):
            parts += ["", "Models:", model_catalog(self._models)]
        parts += ["", "Answer with only a JSON object like this example:",
                  json.dumps(_EXAMPLE)]
        return "\n".join(parts)

    def _messages(self, goal: str, tools: ToolRegistry | None, context: str) -> list[ChatMessage]:
        user = f"Goal: {goal.strip()}"
        if context.strip():
            user += f"\n\nContext (earlier work on this goal):\n{context.strip()}"
        user += "\n\nWrite the plan now."
        return [ChatMessage.system(self.system_prompt(tools)), ChatMessage.user(user)]

    async def plan(self, goal: str, tools: ToolRegistry | None = None,
                   context: str = "") -> Plan:
        """A validated plan for ``goal``; the single-step plan if planning fails.

        Connection, auth and similar errors of the planner model propagate (the run cannot
        go on without a model); a model that answers, but not with a usable plan, does not.
        """
        from desktop_app.core.llm.structured import structured_llm_call

        messages = self._messages(goal, tools, context)
        usage = Usage()
        known_tools = set(tools.names()) if tools is not None else None
        reasons: list[str] = []
        for attempt in range(1, self.max_attempts + 1):
            try:
                result: Any = await structured_llm_call(
                    self._llm, messages, PlanDraft, function_name=PLAN_FUNCTION,
                    function_description="Submit the plan of steps for the goal.",
                    max_tokens=self.max_tokens)
            except (LLMBadOutputError, ValidationError, ValueError) as exc:
                usage = usage + _usage_of(exc)
                reasons.append(f"attempt {attempt}: no usable plan ({_short(exc)})")
                log.info("planner attempt %d gave no usable plan: %s", attempt, exc)
                continue
            usage = usage + (result.usage or Usage())
            try:
                plan = validate_plan(_as_draft(result.value), known_models=known_model_names(
                    self._models), known_tools=known_tools, max_steps=self.max_steps)
            except (PlanValidationError, ValidationError) as exc:
                problems = getattr(exc, "problems", None) or [_short(exc)]
                reasons.append(f"attempt {attempt}: " + " ".join(problems))
                messages = messages + [
                    ChatMessage.assistant(json.dumps(_raw_of(result), ensure_ascii=False)),
                    ChatMessage.user("That plan was rejected: " + " ".join(problems)
                                     + " Send a corrected plan as one JSON object.")]
                continue
            return plan.model_copy(update={"usage": usage})
        reason = "Planning failed, so the goal runs as a single step. " + "; ".join(reasons)
        log.warning(reason)
        return Plan.single_step(goal, reason=reason).model_copy(update={"usage": usage})


def _as_draft(value: Any) -> PlanDraft | dict[str, Any] | list[Any]:
    if isinstance(value, (PlanDraft, dict, list)):
        return value
    if hasattr(value, "model_dump"):
        dumped: dict[str, Any] = value.model_dump()
        return dumped
    raise ValueError(f"unexpected plan value of type {type(value).__name__}")


def _raw_of(result: Any) -> Any:
    raw = getattr(result, "raw", None)
    if raw is None and hasattr(result.value, "model_dump"):
        raw = result.value.model_dump()
    return raw


def _usage_of(exc: BaseException) -> Usage:
    usage = getattr(exc, "usage", None)
    return usage if isinstance(usage, Usage) else Usage()


def _short(exc: BaseException, limit: int = 300) -> str:
    text = str(exc).replace("\n", " ")
    return text if len(text) <= limit else text[:limit] + "…"


def history_context(history: Sequence[ChatMessage], *, max_chars: int = 2000) -> str:
    """The recent conversation as plain text for the planner (newest kept, oldest cut)."""
    lines = [f"{m.role}: {m.content.strip()}" for m in history
             if m.role in ("user", "assistant") and m.content.strip()]
    text = "\n".join(lines)
    return text if len(text) <= max_chars else "…" + text[-max_chars:]
