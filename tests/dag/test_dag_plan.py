"""Plan parsing and validation: what is repaired (with a warning) and what is rejected."""

from __future__ import annotations

import pytest

from desktop_app.core.dag.plan import (
    Plan,
    PlanDraft,
    PlanValidationError,
    coerce_dependencies,
    find_cycle,
    natural_key,
    validate_plan,
)


def steps(*items: dict[str, object]) -> dict[str, object]:
    return {"steps": list(items)}


def test_valid_plan_keeps_order_and_fields() -> None:
    plan = validate_plan(steps(
        {"id": "step_1", "task": "find the population of Paris", "tool_hint": "search",
         "model_hint": "fast"},
        {"id": "step_2", "task": "compare", "dependencies": ["step_1"]}),
        known_models={"fast", "general"}, known_tools={"search"})
    assert plan.ids == ["step_1", "step_2"]
    assert plan.steps[0].tool_hint == "search" and plan.steps[0].model_hint == "fast"
    assert plan.steps[1].dependencies == ("step_1",)
    assert plan.warnings == []


@pytest.mark.parametrize(("raw", "expected"), [
    ("step_1", ["step_1"]),
    ("step_1, step_2", ["step_1", "step_2"]),
    ("step_1;step_2 step_3", ["step_1", "step_2", "step_3"]),
    ("", []),
    (None, []),
    ([1, 2], ["1", "2"]),
    ([{"id": "step_1"}], ["step_1"]),
    (["step_1, step_2"], ["step_1", "step_2"]),
])
def test_dependencies_in_any_shape_become_a_list(raw: object, expected: list[str]) -> None:
    assert coerce_dependencies(raw) == expected


def test_dependencies_given_as_a_string_are_repaired() -> None:
    plan = validate_plan(steps({"id": "a", "task": "x"}, {"id": "b", "task": "y"},
                               {"id": "c", "task": "z", "dependencies": "a, b"}))
    assert plan.step("c").dependencies == ("a", "b")


def test_int_ids_and_numeric_dependencies_resolve() -> None:
    plan = validate_plan(steps({"id": 1, "task": "x"}, {"id": 2, "task": "y", "dependencies": [1]}))
    assert plan.step("2").dependencies == ("1",)
    # "1" when only step_1 exists means step_1 (a common small-model slip), with a warning
    plan = validate_plan(steps({"id": "step_1", "task": "x"},
                               {"id": "step_2", "task": "y", "dependencies": ["1"]}))
    assert plan.step("step_2").dependencies == ("step_1",)
    assert any("read as 'step_1'" in w for w in plan.warnings)


def test_missing_ids_are_filled_without_clashing() -> None:
    plan = validate_plan(steps({"task": "x"}, {"id": "step_1", "task": "y"}, {"task": "z"}))
    assert len(set(plan.ids)) == 3
    assert "step_1" in plan.ids
    assert sum("had no id" in w for w in plan.warnings) == 2


def test_unknown_dependency_is_dropped_with_a_warning() -> None:
    plan = validate_plan(steps({"id": "s1", "task": "x", "dependencies": ["nope"]}))
    assert plan.step("s1").dependencies == ()
    assert plan.warnings == ["Step 's1': unknown dependency 'nope' dropped."]


def test_self_dependency_is_dropped() -> None:
    plan = validate_plan(steps({"id": "s1", "task": "x", "dependencies": ["s1"]}))
    assert plan.step("s1").dependencies == ()
    assert "depended on itself" in plan.warnings[0]


def test_unknown_model_hint_is_ignored_with_a_warning() -> None:
    plan = validate_plan(steps({"id": "s1", "task": "x", "model_hint": "gpt-9"}),
                         known_models={"fast", "general", "qwen"})
    assert plan.step("s1").model_hint is None
    assert "unknown model_hint 'gpt-9' ignored" in plan.warnings[0]


def test_model_hint_none_strings_mean_no_hint() -> None:
    plan = validate_plan(steps({"id": "s1", "task": "x", "model_hint": "none", "tool_hint": ""}),
                         known_models={"fast"})
    assert plan.step("s1").model_hint is None and plan.step("s1").tool_hint is None
    assert plan.warnings == []


def test_unknown_tool_hint_is_ignored() -> None:
    plan = validate_plan(steps({"id": "s1", "task": "x", "tool_hint": "teleport"}),
                         known_tools={"calculator"})
    assert plan.step("s1").tool_hint is None
    assert "unknown tool_hint 'teleport'" in plan.warnings[0]


def test_duplicate_ids_with_different_tasks_are_rejected() -> None:
    with pytest.raises(PlanValidationError) as info:
        validate_plan(steps({"id": "s1", "task": "x"}, {"id": "s1", "task": "y"}))
    assert "Duplicate step id 's1'" in str(info.value)


def test_exact_repeat_of_a_step_is_merged() -> None:
    plan = validate_plan(steps({"id": "s1", "task": "x"}, {"id": "s1", "task": "x"}))
    assert plan.ids == ["s1"]
    assert "merged" in plan.warnings[0]


def test_cycle_is_rejected_and_named() -> None:
    with pytest.raises(PlanValidationError) as info:
        validate_plan(steps({"id": "step_1", "task": "a", "dependencies": ["step_3"]},
                            {"id": "step_2", "task": "b", "dependencies": ["step_1"]},
                            {"id": "step_3", "task": "c", "dependencies": ["step_2"]},
                            {"id": "step_4", "task": "d"}))
    message = str(info.value)
    assert "cycle: step_1 -> step_3 -> step_2 -> step_1" in message
    assert "step_4" not in message


def test_find_cycle_on_acyclic_diamond_is_none() -> None:
    assert find_cycle({"a": [], "b": ["a"], "c": ["a"], "d": ["b", "c"]}) is None
    assert find_cycle({"a": ["a"]}) == ["a", "a"]


def test_plan_over_the_size_limit_is_rejected() -> None:
    draft = steps(*({"id": f"s{i}", "task": f"t{i}"} for i in range(12)))
    with pytest.raises(PlanValidationError) as info:
        validate_plan(draft, max_steps=8)
    assert "12 steps; the limit is 8" in str(info.value)
    assert len(validate_plan(draft, max_steps=12).steps) == 12


def test_empty_tasks_are_dropped_and_an_empty_plan_is_rejected() -> None:
    plan = validate_plan(steps({"id": "s1", "task": ""}, {"id": "s2", "task": "real"}))
    assert plan.ids == ["s2"]
    with pytest.raises(PlanValidationError, match="no step with a task"):
        validate_plan(steps({"id": "s1", "task": "  "}))


def test_schema_rejects_missing_steps_but_accepts_a_bare_list() -> None:
    with pytest.raises(ValueError):
        PlanDraft.model_validate({})
    with pytest.raises(ValueError):
        PlanDraft.model_validate({"steps": []})
    assert validate_plan([{"id": "a", "task": "x"}]).ids == ["a"]


def test_plan_schema_is_clean_json_schema() -> None:
    schema = PlanDraft.model_json_schema()
    step_schema = schema["$defs"]["StepDraft"]
    assert set(step_schema["properties"]) == {"id", "task", "dependencies", "tool_hint",
                                              "model_hint"}
    assert step_schema["properties"]["dependencies"]["type"] == "array"
    # the model is asked for ids and dependencies; validation still repairs their absence
    assert step_schema["required"] == ["id", "task", "dependencies"]
    assert "title" not in step_schema and "description" not in schema
    assert validate_plan({"steps": [{"task": "x"}]}).ids == ["step_1"]


def test_natural_order() -> None:
    ids = ["step_10", "step_2", "step_1", "b", "a"]
    assert sorted(ids, key=natural_key) == ["a", "b", "step_1", "step_2", "step_10"]


def test_dependants_are_transitive() -> None:
    plan = validate_plan(steps({"id": "s1", "task": "a"}, {"id": "s2", "task": "b",
                                                            "dependencies": ["s1"]},
                               {"id": "s3", "task": "c", "dependencies": ["s2"]},
                               {"id": "s4", "task": "d"}))
    assert plan.dependants("s1") == ["s2", "s3"]
    assert plan.dependants("s4") == []


def test_single_step_fallback() -> None:
    plan = Plan.single_step("do it all", reason="planning failed")
    assert plan.fallback and plan.ids == ["step_1"] and plan.steps[0].task == "do it all"


def test_swapped_hints_are_put_right() -> None:
    plan = validate_plan(steps({"id": "s1", "task": "x", "model_hint": "calculator"},
                               {"id": "s2", "task": "y", "tool_hint": "fast"},
                               {"id": "s3", "task": "z", "model_hint": "calculator",
                                "tool_hint": "clock"}),
                         known_models={"fast", "qwen"}, known_tools={"calculator", "clock"})
    assert (plan.step("s1").model_hint, plan.step("s1").tool_hint) == (None, "calculator")
    assert (plan.step("s2").model_hint, plan.step("s2").tool_hint) == ("fast", None)
    # the tool slot is taken: the stray model_hint is only dropped
    assert (plan.step("s3").model_hint, plan.step("s3").tool_hint) == (None, "clock")
    assert "read as tool_hint" in plan.warnings[0] and "read as model_hint" in plan.warnings[1]
