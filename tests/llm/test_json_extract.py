"""extract_json: fences, prose, balanced objects, lenient strings, backslashes preserved."""

from __future__ import annotations

import json

import pytest

from desktop_app.core.llm.json_extract import (
    complete_truncated,
    ends_inside_string,
    extract_json,
    iter_balanced_objects,
    loads_lenient,
)


def test_direct_object_is_parsed() -> None:
    assert extract_json('{"a": 1, "b": [1, 2]}') == {"a": 1, "b": [1, 2]}


def test_fenced_block_with_language_tag() -> None:
    text = 'Here you go:\n```json\n{"tool": "calculator"}\n```\nHope that helps.'
    assert extract_json(text) == {"tool": "calculator"}


def test_fenced_block_without_language_tag() -> None:
    assert extract_json('```\n{"x": true}\n```') == {"x": True}


def test_first_balanced_object_in_prose() -> None:
    text = 'I think {"type": "final_answer", "answer": "42"} and also {"other": 1}'
    assert extract_json(text) == {"type": "final_answer", "answer": "42"}


def test_braces_inside_strings_do_not_confuse_the_scanner() -> None:
    text = 'prefix {"code": "if (x) { return \\"}\\"; }", "n": 1} suffix'
    assert extract_json(text) == {"code": 'if (x) { return "}"; }', "n": 1}


def test_non_json_braces_in_prose_are_skipped() -> None:
    assert extract_json('set {a, b} then {"ok": 1}') == {"ok": 1}


def test_literal_newline_inside_string_is_tolerated() -> None:
    assert extract_json('{"answer": "line one\nline two"}') == {"answer": "line one\nline two"}


def test_latex_frac_with_single_backslash_survives() -> None:
    # Strict JSON would read \f as a form feed and lose the backslash.
    value = extract_json(r'{"answer": "\frac{1}{2} + \beta"}')
    assert value == {"answer": "\\frac{1}{2} + \\beta"}


def test_latex_invalid_escapes_keep_their_backslash() -> None:
    value = extract_json(r'{"answer": "\alpha + \sqrt{x} \(y\)"}')
    assert value == {"answer": "\\alpha + \\sqrt{x} \\(y\\)"}


def test_latex_commands_starting_with_n_t_r_survive() -> None:
    value = extract_json(r'{"answer": "\theta \neq \rho \times 2 \text{m}"}')
    assert value == {"answer": "\\theta \\neq \\rho \\times 2 \\text{m}"}


def test_properly_escaped_latex_is_not_doubled() -> None:
    original = {"answer": "\\frac{a}{b} and \\alpha"}
    assert extract_json(json.dumps(original)) == original


def test_real_escapes_keep_their_meaning() -> None:
    value = extract_json(r'{"a": "one\ntwo\tthree \"q\" \u00e9 back\\slash"}')
    assert value == {"a": 'one\ntwo\tthree "q" é back\\slash'}


def test_trailing_commas_are_tolerated() -> None:
    assert extract_json('{"tools": ["a", "b",],}') == {"tools": ["a", "b"]}


def test_trailing_comma_inside_string_is_kept() -> None:
    assert extract_json('{"s": ",}"}') == {"s": ",}"}


@pytest.mark.parametrize("text", ["", None, "no json here", "[1, 2, 3]", '"just a string"',
                                  '{"unterminated": ', "{not: json}"])
def test_returns_none_when_there_is_no_object(text: str | None) -> None:
    assert extract_json(text) is None


def test_array_wrapped_object_in_prose_finds_object() -> None:
    assert extract_json('result: [{"a": 1}]') == {"a": 1}


def test_iter_balanced_objects_skips_unbalanced_start() -> None:
    assert iter_balanced_objects('{ oops {"a": {"b": 1}} tail {"c": 2}') == [
        '{"a": {"b": 1}}', '{"c": 2}']


def test_loads_lenient_raises_value_error_on_garbage() -> None:
    with pytest.raises(ValueError):
        loads_lenient("{nope}")


# --- objects the model stopped writing too early --------------------------------------------
@pytest.mark.parametrize(("text", "expected"), [
    ('{"type": "final_answer", "answer": "42"', {"type": "final_answer", "answer": "42"}),
    ('Sure: {"type": "tool_call", "tool": "calculator", "args": {"expression": "1+1"',
     {"type": "tool_call", "tool": "calculator", "args": {"expression": "1+1"}}),
    ('{"answer": "cut in the mid', {"answer": "cut in the mid"}),
    ('{"a": [1, 2,', {"a": [1, 2]}),
    ('{"answer": "\\\\frac{1}{2} is', {"answer": "\\frac{1}{2} is"}),
])
def test_an_object_cut_off_at_the_end_is_closed_on_request(text: str, expected: dict) -> None:
    assert extract_json(text, close_truncated=True) == expected
    assert extract_json(text) is None  # structured calls must not get a guessed value


@pytest.mark.parametrize("text", ["no json { here", '{"a": 1]', "{{{"])
def test_closing_never_invents_an_object_from_garbage(text: str) -> None:
    assert extract_json(text, close_truncated=True) is None


def test_a_complete_object_wins_over_a_truncated_one_after_it() -> None:
    assert extract_json('{"a": 1} and then {"b": ', close_truncated=True) == {"a": 1}


@pytest.mark.parametrize(("text", "inside"), [
    ('<tool_call>\n{"tags": ["Landlord", "La', True),
    ('<tool_call>\n{"tags": ["Landlord", ', False),
    ('{"text": "she said \\"hi', True),  # an escaped quote does not close the string
    ('{"text": "she said \\"hi\\""', False),
    ("no object here", False),
])
def test_ends_inside_string_reads_strings_as_complete_truncated_does(
        text: str, inside: bool) -> None:
    assert ends_inside_string(text) is inside
    if inside:  # closing the string is what makes the cut-off object parse
        closed = complete_truncated(text)
        assert closed is not None and json.loads(closed)
