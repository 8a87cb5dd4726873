"""The DAG plan: the schema the planner LLM fills in, and validation with repair (SPEC §7).

Two layers on purpose. ``PlanDraft`` is what a model writes: lenient on input (an int id, a
``dependencies`` value given as a string, a missing hint) so that a small model's near-miss
still parses. ``validate_plan`` then turns a draft into a ``Plan`` the executor can trust:
it repairs what has one sensible repair (and says so in ``Plan.warnings``) and rejects what
has none (duplicate ids with different tasks, cycles, too many steps) with a
``PlanValidationError`` naming every problem, so the planner can show it to the model.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from desktop_app.core.errors import DesktopAppError
from desktop_app.core.llm.types import Usage

#: Default upper bound of steps in one plan; more is almost always a planner going astray.
MAX_PLAN_STEPS = 8

_SPLIT_DEPS = re.compile(r"[,;\s]+")
_NATURAL = re.compile(r"(\d+)")


class PlanValidationError(DesktopAppError):
    """A plan that cannot be repaired; ``problems`` lists every reason, one sentence each."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = list(problems)
        super().__init__("The plan is invalid: " + " ".join(problems),
                         hint="Ask for a plan without these problems, or run the goal in "
                              "ReAct mode.")


def natural_key(step_id: str) -> tuple[tuple[int, int | str], ...]:
    """Sort key that orders ``step_2`` before ``step_10`` (digits compare as numbers)."""
    parts = _NATURAL.split(step_id)
    return tuple((0, int(p)) if p.isdigit() else (1, p.lower()) for p in parts if p != "")


def _as_id(value: Any) -> str:
    return str(value).strip() if value is not None else ""


def coerce_dependencies(value: Any) -> list[str]:
    """``dependencies`` as a list of ids, whatever shape the model gave it.

    A string is split on commas/whitespace (``"step_1, step_2"``), ``None`` or ``""`` is no
    dependency, numbers become strings, and ``{"id": ...}`` objects give their id.
    """
    if value is None:
        return []
    if isinstance(value, str):
        return [part for part in _SPLIT_DEPS.split(value.strip()) if part]
    if isinstance(value, dict):
        value = [value]
    if isinstance(value, (list, tuple, set)):
        out: list[str] = []
        for item in value:
            if isinstance(item, dict):
                item = item.get("id", item.get("step_id"))
            if isinstance(item, str):
                out.extend(coerce_dependencies(item))
            elif item is not None and _as_id(item):
                out.append(_as_id(item))
        return out
    return [_as_id(value)] if _as_id(value) else []


def compact_schema(schema: dict[str, Any]) -> None:
    """Drop titles and the class docstring from a JSON schema: prompt tokens, no meaning."""
    schema.pop("description", None)

    def strip(node: Any) -> None:
        if isinstance(node, dict):
            node.pop("title", None)
            for value in node.values():
                strip(value)
        elif isinstance(node, list):
            for value in node:
                strip(value)

    strip(schema)


def _step_schema(schema: dict[str, Any]) -> None:
    """The step schema as the model sees it: id and dependencies required.

    Validation stays lenient (a missing id is repaired), but a server that turns the schema
    into a grammar then makes the model write ids and dependencies, which keeps plans
    whose dependencies refer to ids that were never written out of the picture.
    """
    compact_schema(schema)
    schema["required"] = ["id", "task", "dependencies"]


class StepDraft(BaseModel):
    """One step as the planner model wrote it (lenient input, clean JSON schema)."""

    model_config = ConfigDict(extra="ignore", json_schema_extra=_step_schema)

    id: str = Field("", description="Unique step id, e.g. step_1")
    task: str = Field(description="What this step must do, self-contained, one or two sentences")
    dependencies: list[str] = Field(default_factory=list,
                                    description="Ids of steps whose results this step needs")
    tool_hint: str | None = Field(None, description="Name of the tool this step will likely use")
    model_hint: str | None = Field(None, description="Model name or role for this step, "
                                                     "e.g. fast for simple steps")

    @field_validator("id", mode="before")
    @classmethod
    def _id_to_str(cls, value: Any) -> str:
        return _as_id(value)

    @field_validator("task", mode="before")
    @classmethod
    def _task_to_str(cls, value: Any) -> str:
        return "" if value is None else str(value).strip()

    @field_validator("dependencies", mode="before")
    @classmethod
    def _deps(cls, value: Any) -> list[str]:
        return coerce_dependencies(value)

    @field_validator("tool_hint", "model_hint", mode="before")
    @classmethod
    def _hint(cls, value: Any) -> str | None:
        if value is None:
            return None
        text = str(value).strip()
        return text if text and text.lower() not in {"none", "null", "n/a", "-"} else None


class PlanDraft(BaseModel):
    """The plan schema handed to ``structured_llm_call``."""

    model_config = ConfigDict(extra="ignore", json_schema_extra=compact_schema)

    steps: list[StepDraft] = Field(min_length=1, description="The steps of the plan")


class PlanStep(BaseModel):
    """A validated step: unique id, non-empty task, dependencies that exist."""

    model_config = ConfigDict(frozen=True)

    id: str
    task: str
    dependencies: tuple[str, ...] = ()
    tool_hint: str | None = None
    model_hint: str | None = None


class Plan(BaseModel):
    """A validated, acyclic plan; ``warnings`` says what was repaired on the way."""

    steps: list[PlanStep]
    warnings: list[str] = Field(default_factory=list)
    fallback: bool = False  # True when this is the single-step plan used after planning failed
    usage: Usage = Field(default_factory=Usage)  # tokens spent making this plan

    def step(self, step_id: str) -> PlanStep:
        for step in self.steps:
            if step.id == step_id:
                return step
        raise KeyError(step_id)

    @property
    def ids(self) -> list[str]:
        return [step.id for step in self.steps]

    def dependants(self, step_id: str) -> list[str]:
        """Every step that depends on ``step_id`` directly or transitively, natural order."""
        found: set[str] = set()
        frontier = [step_id]
        while frontier:
            current = frontier.pop()
            for step in self.steps:
                if current in step.dependencies and step.id not in found:
                    found.add(step.id)
                    frontier.append(step.id)
        return sorted(found, key=natural_key)

    @classmethod
    def single_step(cls, goal: str, *, reason: str = "") -> Plan:
        """The fallback plan: the whole goal as one step."""
        warnings = [reason] if reason else []
        return cls(steps=[PlanStep(id="step_1", task=goal)], warnings=warnings, fallback=True)


def find_cycle(edges: dict[str, Iterable[str]]) -> list[str] | None:
    """One cycle in ``id -> dependencies`` as ``[a, b, ..., a]``, or None if acyclic.

    Iterative DFS in natural order, so the cycle reported for a given plan is stable.
    """
    white, grey, black = 0, 1, 2
    colour = {node: white for node in edges}
    for root in sorted(edges, key=natural_key):
        if colour[root] != white:
            continue
        path: list[str] = [root]
        iters = [iter(sorted(edges[root], key=natural_key))]
        colour[root] = grey
        while iters:
            nxt = next(iters[-1], None)
            if nxt is None:
                colour[path.pop()] = black
                iters.pop()
                continue
            if nxt not in colour:
                continue
            if colour[nxt] == grey:
                return path[path.index(nxt):] + [nxt]
            if colour[nxt] == white:
                colour[nxt] = grey
                path.append(nxt)
                iters.append(iter(sorted(edges[nxt], key=natural_key)))
    return None


def _repair_hints(step: StepDraft, models: set[str] | None, tools: set[str] | None,
                  warnings: list[str]) -> tuple[str | None, str | None]:
    """(model_hint, tool_hint) with unknown hints dropped and swapped hints put right.

    Small models often write a tool name as ``model_hint`` (or a model as ``tool_hint``);
    when the other slot is empty and the name is known there, it is moved, not lost.
    """
    model_hint, tool_hint = step.model_hint, step.tool_hint
    if model_hint is not None and models is not None and model_hint not in models:
        if tools is not None and model_hint in tools and tool_hint is None:
            warnings.append(f"Step '{step.id}': model_hint '{model_hint}' is a tool; "
                            "read as tool_hint.")
            tool_hint = model_hint
        else:
            warnings.append(f"Step '{step.id}': unknown model_hint '{model_hint}' ignored "
                            "(the default model runs it).")
        model_hint = None
    if tool_hint is not None and tools is not None and tool_hint not in tools:
        if models is not None and tool_hint in models and model_hint is None:
            warnings.append(f"Step '{step.id}': tool_hint '{tool_hint}' is a model; "
                            "read as model_hint.")
            model_hint = tool_hint
        else:
            warnings.append(f"Step '{step.id}': unknown tool_hint '{tool_hint}' ignored.")
        tool_hint = None
    return model_hint, tool_hint


def _draft_steps(draft: PlanDraft | dict[str, Any] | list[Any]) -> list[StepDraft]:
    if isinstance(draft, PlanDraft):
        return list(draft.steps)
    if isinstance(draft, list):  # a bare list of steps is a common small-model shape
        draft = {"steps": draft}
    return list(PlanDraft.model_validate(draft).steps)


def validate_plan(draft: PlanDraft | dict[str, Any] | list[Any], *,
                  known_models: Collection[str] | None = None,
                  known_tools: Collection[str] | None = None,
                  max_steps: int = MAX_PLAN_STEPS) -> Plan:
    """Repair what can be repaired, reject the rest; see the module docstring.

    Repairs (each adds a warning): missing ids get ``step_N``; a step repeated with the same
    id and task is merged; empty tasks are dropped; ``"1"`` resolves to ``step_1`` when only
    that exists; self- and unknown dependencies are dropped; an unknown ``model_hint`` or
    ``tool_hint`` is ignored. Rejections: no steps, duplicate ids with different tasks,
    more than ``max_steps`` steps, cycles (the cycle is named).
    """
    steps = _draft_steps(draft)
    warnings: list[str] = []
    problems: list[str] = []

    # ids: fill in, then merge exact repeats, reject real duplicates.
    used = {s.id for s in steps if s.id}
    kept: list[StepDraft] = []
    by_id: dict[str, StepDraft] = {}
    for index, step in enumerate(steps, start=1):
        if not step.task:
            warnings.append(f"Dropped step '{step.id or index}': it has no task.")
            continue
        if not step.id:
            candidate, n = f"step_{index}", index
            while candidate in used:
                n += 1
                candidate = f"step_{n}"
            used.add(candidate)
            warnings.append(f"Step {index} had no id; named it '{candidate}'.")
            step = step.model_copy(update={"id": candidate})
        if step.id in by_id:
            if by_id[step.id].task == step.task:
                warnings.append(f"Step '{step.id}' appeared twice with the same task; merged.")
                continue
            problems.append(f"Duplicate step id '{step.id}' for different tasks "
                            f"('{by_id[step.id].task[:60]}' and '{step.task[:60]}').")
            continue
        by_id[step.id] = step
        kept.append(step)

    if not kept:
        problems.append("The plan has no step with a task.")
    if len(kept) > max_steps:
        problems.append(f"The plan has {len(kept)} steps; the limit is {max_steps}. "
                        "Merge related steps.")
    if problems:
        raise PlanValidationError(problems)

    ids = set(by_id)
    models = set(known_models) if known_models is not None else None
    tools = set(known_tools) if known_tools is not None else None
    final: list[PlanStep] = []
    for step in kept:
        deps: list[str] = []
        for dep in step.dependencies:
            target = dep
            if target not in ids and f"step_{target}" in ids:
                warnings.append(f"Step '{step.id}': dependency '{dep}' read as 'step_{dep}'.")
                target = f"step_{dep}"
            if target == step.id:
                warnings.append(f"Step '{step.id}' depended on itself; dropped that dependency.")
            elif target not in ids:
                warnings.append(f"Step '{step.id}': unknown dependency '{dep}' dropped.")
            elif target not in deps:
                deps.append(target)
        model_hint, tool_hint = _repair_hints(step, models, tools, warnings)
        final.append(PlanStep(id=step.id, task=step.task, dependencies=tuple(deps),
                              tool_hint=tool_hint, model_hint=model_hint))

    cycle = find_cycle({s.id: s.dependencies for s in final})
    if cycle is not None:
        chain = " -> ".join(cycle)
        message = f"The dependencies form a cycle: {chain} (each step depends on the next)."
        raise PlanValidationError([message])
    return Plan(steps=final, warnings=warnings)
