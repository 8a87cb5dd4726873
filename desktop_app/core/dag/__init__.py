"""DAG mode (SPEC §7): plan a goal as a graph of steps, run independent steps in parallel,
each on the model its ``model_hint`` selects, judge the result, re-plan a bounded number of
times, and synthesise the answer from the step results.

``DagRunner`` drives a whole run and emits the events (``dag.events`` plus the engine's
``Phase``/``Answer*``/``Done``); ``DAGPlanner``, ``DAGExecutor`` and ``PlanAnalyzer`` are
its parts.
"""

from desktop_app.core.dag.analyzer import Analysis, AnalysisOutcome, PlanAnalyzer
from desktop_app.core.dag.events import (
    DagAnalysis,
    DagPlan,
    DagReplan,
    DagStepDone,
    DagStepProgress,
    DagStepStart,
    PlannedStep,
)
from desktop_app.core.dag.executor import DAGExecutor
from desktop_app.core.dag.plan import (
    MAX_PLAN_STEPS,
    Plan,
    PlanDraft,
    PlanStep,
    PlanValidationError,
    validate_plan,
)
from desktop_app.core.dag.planner import DAGPlanner
from desktop_app.core.dag.results import ExecutionResult, StepContext, StepOutput, StepRun
from desktop_app.core.dag.runner import DagResult, DagRound, DagRunner, run_dag

__all__ = [
    "MAX_PLAN_STEPS", "Analysis", "AnalysisOutcome", "DAGExecutor", "DAGPlanner",
    "DagAnalysis", "DagPlan", "DagReplan", "DagResult", "DagRound", "DagRunner", "DagStepDone",
    "DagStepProgress", "DagStepStart", "ExecutionResult", "Plan", "PlanAnalyzer", "PlanDraft",
    "PlanStep", "PlanValidationError", "PlannedStep", "StepContext", "StepOutput", "StepRun",
    "run_dag", "validate_plan",
]
