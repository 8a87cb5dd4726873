"""``desktop-app ask --dag "goal"``: DAG mode (SPEC §7) in the terminal.

The answer streams to stdout as in ReAct mode; the plan, each step (with the model it runs
on), the analysis and re-plans go to stderr. ``--events`` prints the raw SSE stream, DAG
events included. (A private module: ``ask`` imports it only when ``--dag`` is given.)
"""

from __future__ import annotations

import argparse
from typing import Any

from desktop_app.cli.common import make_confirmer, make_share_gate
from desktop_app.core.agent.events import Event, Phase
from desktop_app.core.config.settings import Settings
from desktop_app.core.dag.events import (
    DagAnalysis,
    DagPlan,
    DagReplan,
    DagStepDone,
    DagStepProgress,
    DagStepStart,
)
from desktop_app.core.dag.runner import DagRunner
from desktop_app.core.llm.registry import ModelRegistry
from desktop_app.core.tools.base import ToolRegistry
from desktop_app.core.tools.builtin import default_tools


def _one_line(text: str, limit: int = 160) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


class DagPrinter:
    """Renders DAG events; everything else goes to the ``ask`` printer it wraps."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def __call__(self, event: Event) -> None:
        if getattr(self.inner, "events", False):
            self.inner(event)  # raw SSE: every event as it is
            return
        note = self.inner._note  # the same stderr channel as the ReAct output
        if isinstance(event, DagPlan):
            head = "plan" if event.round == 0 else f"new plan (round {event.round + 1})"
            note(f"· {head}{' (single-step fallback)' if event.fallback else ''}:")
            for step in event.steps:
                after = f" after {', '.join(step.dependencies)}" if step.dependencies else ""
                note(f"    {step.id} [{step.model}]{after}: {_one_line(step.task, 120)}")
            for warning in event.warnings:
                note(f"    ! {_one_line(warning, 200)}")
        elif isinstance(event, DagStepStart):
            note(f"· {event.step_id} started on {event.model}")
        elif isinstance(event, DagStepProgress):
            data = event.data
            if data.get("type") == "iteration" and data.get("status") == "start":
                note(f"  {event.step_id} · {data.get('tool_name')} "
                     f"{_one_line(str(data.get('tool_args')), 120)}")
        elif isinstance(event, DagStepDone):
            detail = event.result if event.outcome == "done" else (event.error or "")
            note(f"· {event.step_id} {event.outcome} ({event.elapsed:.1f} s): "
                 f"{_one_line(detail)}")
        elif isinstance(event, DagAnalysis):
            verdict = "achieved" if event.achieved else "not achieved"
            note(f"· analysis: {verdict} (confidence {event.confidence:.2f}) "
                 f"{_one_line(event.reason, 120)}")
        elif isinstance(event, DagReplan):
            note(f"· re-planning: {_one_line(event.reason, 120)}")
        elif isinstance(event, Phase) and event.total_tools is None:
            note(f"· {event.phase}…")
        else:
            self.inner(event)


async def run_dag_goal(args: argparse.Namespace, registry: ModelRegistry, settings: Settings,
                       printer: Any, tools: ToolRegistry | None = None) -> int:
    """Run the question as a DAG goal; returns the exit code (0 ok, 1 failed)."""
    agent_options: dict[str, Any] = {
        "use_native_tools": not args.json_mode,
        "confirm": make_confirmer(settings, assume_yes=args.yes),
        # Every step's model on another computer asks before the user's files go to it.
        "share": make_share_gate(assume_yes=args.yes),
        "tool_timeout": settings.tools.timeout_seconds,
    }
    if tools is None:
        tools = ToolRegistry(default_tools(settings))
    runner = DagRunner(registry, tools, model=args.model,
                       step_max_iterations=args.max_iterations or 8,
                       agent_options=agent_options)
    result = await runner.run(args.prompt_text, on_event=DagPrinter(printer))
    return 0 if result.error is None else 1
