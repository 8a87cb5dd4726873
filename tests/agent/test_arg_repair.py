"""Near-miss arguments are repaired only into something the schema accepts."""

from __future__ import annotations

from desktop_app.core.agent.arg_repair import repair_arguments
from desktop_app.core.tools.builtin import CalculatorTool
from desktop_app.core.tools.builtin.units import UnitConvertTool


def test_schema_words_copied_into_the_arguments_are_dropped() -> None:
    schema = CalculatorTool.parameters
    fixed = repair_arguments(schema, {"expression": "98765 / 43", "required": ["expression"]})
    assert fixed == {"expression": "98765 / 43"}
    CalculatorTool().validate(fixed)


def test_numbers_written_as_text_become_numbers() -> None:
    fixed = repair_arguments(UnitConvertTool.parameters,
                             {"value": "1,609.3", "from_unit": "m", "to_unit": "mi"})
    assert fixed["value"] == 1609.3
    UnitConvertTool().validate(fixed)


def test_one_misnamed_argument_takes_the_missing_name() -> None:
    assert repair_arguments(CalculatorTool.parameters, {"expr": "2+2"}) == {"expression": "2+2"}


def test_nothing_is_guessed_when_two_values_could_be_meant() -> None:
    fixed = repair_arguments(CalculatorTool.parameters, {"a": "1+1", "b": "2+2"})
    assert "expression" not in fixed


def test_a_value_of_the_wrong_kind_is_not_forced_in() -> None:
    assert "expression" not in repair_arguments(CalculatorTool.parameters, {"terms": [1, 2]})


def test_a_copied_property_schema_is_dropped_not_passed_on() -> None:
    schema = {"type": "object", "properties": {"query": {"type": "string"}},
              "additionalProperties": False}
    copied = {"query": {"type": "string", "description": "Words to look for"}}
    assert repair_arguments(schema, copied) == {}
    # A real object value for an object property is kept.
    obj = {"type": "object", "properties": {"spec": {"type": "object"}}}
    assert repair_arguments(obj, {"spec": {"type": "bar"}}) == {"spec": {"type": "bar"}}


def test_a_decimal_comma_is_read_as_a_decimal_point() -> None:
    schema = UnitConvertTool.parameters
    for text, expected in (("3,5", 3.5), ("-12,75", -12.75), ("1.234,5", 1234.5),
                           ("1.234.567", 1234567), ("1,234.5", 1234.5),
                           ("1,234", 1234)):  # three digits: ambiguous, thousands as before
        fixed = repair_arguments(schema, {"value": text, "from_unit": "km", "to_unit": "mi"})
        assert fixed["value"] == expected, text
