"""DAG-mode advice from measured evaluation results, and its badge in the model picker."""

from __future__ import annotations

import pytest

from desktop_app.core.evals.advice import dag_advice, shipped_scores
from desktop_app.core.store.evals import EvalRun


def run(mode: str, passed: int, seconds: float, model: str = "m", total: int = 5) -> EvalRun:
    return EvalRun(id=1, created_at=0.0, model=model, mode=mode, suite="everyday",
                   app_version="x", machine="y", passed=passed, total=total,
                   summary={"categories": {"dag_goals": {"passed": passed, "total": total,
                                                         "mean_seconds": seconds}}})


def test_react_is_advised_when_dag_solved_fewer_goals() -> None:
    text = dag_advice("m", [run("dag", 1, 90.0), run("react", 3, 20.0)])
    assert text and "1/5" in text and "3/5" in text and "your evaluation runs" in text


def test_react_is_advised_when_dag_was_as_good_but_far_slower() -> None:
    assert dag_advice("m", [run("dag", 3, 90.0), run("react", 3, 20.0)])
    assert dag_advice("m", [run("dag", 3, 30.0), run("react", 3, 20.0)]) is None


def test_no_advice_when_dag_did_better_or_nothing_was_measured() -> None:
    assert dag_advice("m", [run("dag", 4, 90.0), run("react", 3, 20.0)]) is None
    assert dag_advice("m", [run("react", 3, 20.0)]) is None  # one mode only: no evidence
    assert dag_advice("other", [run("dag", 0, 90.0), run("react", 5, 20.0)]) is None


def test_the_latest_run_per_mode_counts() -> None:
    newest_first = [run("dag", 5, 20.0), run("react", 3, 20.0), run("dag", 0, 20.0)]
    assert dag_advice("m", newest_first) is None


def test_the_bundled_model_ships_its_own_measurement() -> None:
    scores = shipped_scores("qwen2.5-coder-0.5b")
    assert {"react", "dag"} <= scores.keys()
    assert all(s.total == 5 for s in scores.values())
    # ... and so the window advises ReAct for it on first launch, with the numbers.
    text = dag_advice("qwen2.5-coder-0.5b")
    assert text and "the built-in evaluation" in text


@pytest.mark.gui
def test_the_picker_shows_the_advice_only_in_dag_mode(qtbot) -> None:
    from desktop_app.ui.model_picker import ModelPicker

    picker = ModelPicker()
    qtbot.addWidget(picker)
    picker.show()
    picker.set_mode_advice("ReAct is suggested for m.")
    assert not picker.advice.isVisible()
    picker.mode.setCurrentIndex(picker.mode.findData("dag"))
    assert picker.advice.isVisible() and "suggested" in picker.advice.toolTip()
    picker.set_mode_advice(None)
    assert not picker.advice.isVisible()
