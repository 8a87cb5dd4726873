"""Evaluation: run a suite of everyday tasks on models, check the results, keep the scores.

``load_suite`` reads a suite (the built-in one by default), ``run_suite`` runs it with a
``react_runner`` or ``dag_runner``, ``Summary``/``scoreboard`` summarise and compare, and
the store keeps every run (``ConversationStore.save_eval_run``) so models and versions can
be compared over time. ``desktop-app eval`` and the Compare window are the two front ends.
"""

from desktop_app.core.evals.report import Score, Summary, result_line, scoreboard
from desktop_app.core.evals.runner import (
    TaskResult,
    dag_runner,
    react_runner,
    run_suite,
    run_task,
)
from desktop_app.core.evals.suite import EvalSuite, EvalTask, load_suite

__all__ = ["EvalSuite", "EvalTask", "Score", "Summary", "TaskResult", "dag_runner",
           "load_suite", "react_runner", "result_line", "run_suite", "run_task", "scoreboard"]
