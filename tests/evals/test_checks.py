"""The evaluation's checks: a right answer passes, a wrong or lucky one does not."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest

from desktop_app.core.evals.checks import (
    check_date,
    check_number,
    check_text,
    check_time,
    check_weekday,
    numbers_in,
)


def test_numbers_are_read_as_people_write_them() -> None:
    assert numbers_in("7,006,652 and 42.16 km, -3 but not B17 or 2026-12-25") == [
        7006652, 42.16, -3, 2026, 12, 25]


def test_the_right_number_inside_a_ramble_passes() -> None:
    text = "Sure! To compute 1234 * 5678 we multiply them: the result is 7,006,652."
    assert check_number(text, 7006652, prompt="What is 1234 * 5678?") is None


def test_a_wrong_number_fails() -> None:
    assert check_number("It is 6749232480.", 7006652) is not None
    assert check_number("10.02 km", 42.1648, rel_tol=0.002) is not None


def test_a_right_number_beside_a_competing_one_fails() -> None:
    reason = check_number("It is 7006652, or maybe 7006653.", 7006652)
    assert reason is not None and "7006653" in reason


def test_intermediate_results_may_be_listed() -> None:
    text = "12*12 = 144 and 7*8 = 56, so the sum is 200."
    assert check_number(text, 200, prompt="Compute 12*12 and 7*8") is not None
    assert check_number(text, 200, prompt="Compute 12*12 and 7*8", allow=[144, 56]) is None


def test_a_percentage_may_show_its_working_over_100() -> None:
    working = "249 + (19 / 100) * 249 = 296.31"
    assert check_number(working, 296.31, prompt="What is 249 plus 19% VAT?") is None
    # Only for a percentage; and a wrong result still fails beside the working.
    assert check_number(working, 296.31, prompt="What is 249 plus 19 VAT?") is not None
    reason = check_number("249 * 19 / 100 = 47.31, so 296.31 or 300.31", 296.31,
                          prompt="What is 249 plus 19% VAT?", allow=[47.31])
    assert reason is not None and "300.31" in reason


def test_a_decimal_comma_in_the_prompt_is_one_of_its_numbers() -> None:
    # "3,5 km" in a German question is 3.5, which the answer may repeat beside the result.
    answer = "3,5 km sind etwa 2,17 Meilen."
    assert check_number(answer, 2.1748, prompt="Wie viele Meilen sind 3,5 km?",
                        rel_tol=0.003, decimal_comma=True) is None
    reason = check_number("3,5 km sind etwa 2,17 Meilen, oder 3,7.", 2.1748,
                          prompt="Wie viele Meilen sind 3,5 km?", rel_tol=0.003,
                          decimal_comma=True)
    assert reason is not None and "3.7" in reason


def test_time_must_be_the_real_time_in_that_zone() -> None:
    now = datetime(2026, 12, 2, 12, 0, tzinfo=UTC)
    assert check_time("It is 21:01 in Tokyo.", "Asia/Tokyo", lambda: now) is None
    assert check_time("It is 9:02 PM in Tokyo.", "Asia/Tokyo", lambda: now) is None
    assert check_time("It is 12:00 in Tokyo.", "Asia/Tokyo", lambda: now) is not None


def test_dates_in_several_spellings() -> None:
    day = date(2027, 2, 13)
    for text in ("2027-02-13", "13 February 2027", "Feb 13", "February 13th, 2027"):
        assert check_date(text, day) is None, text
    assert check_date("2027-02-14", day) is not None


def test_a_weekday_named_beside_others_fails() -> None:
    assert check_weekday("It was a Thursday.", "thursday") is None
    assert check_weekday("Thursday or Friday", "thursday") is not None


@pytest.mark.parametrize(("text", "ok"), [("William Shakespeare", True), ("Marlowe", False)])
def test_contains_is_case_insensitive(text: str, ok: bool) -> None:
    assert (check_text(text, {"contains": ["shakespeare"]}) is None) is ok


def test_word_matching_does_not_find_au_inside_words() -> None:
    assert check_text("The symbol is Au.", {"contains": ["au"], "word": True}) is None
    assert check_text("Because gold...", {"contains": ["au"], "word": True}) is not None
