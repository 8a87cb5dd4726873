"""Answers that fail whatever they say: each case is one the bundled model gave."""

from __future__ import annotations

import pytest

from desktop_app.core.evals.answer_defects import answer_defect

_NOTE = "Save a note titled 'Groceries' with: milk, eggs, bread"


@pytest.mark.parametrize(("answer", "prompt", "made", "reason"), [
    ('```markdown\nnote_create({"title": "Dentist", "text": "Friday"})\n```',
     "Make a note called 'Dentist'.", False, "tool-call text"),
    ("```html\n<!DOCTYPE html>\n<html><body><svg></svg></body></html>\n```",
     "Draw a bar chart of sales.", True, "source"),
    ("| Name | Phone |\n|---|---|\n| Ana | 555-0101 |", "Create a table of Ana's phone.",
     True, "copies the table"),
    (_NOTE, _NOTE, False, "repeats the request"),
    ("Sure! " + _NOTE + ".", _NOTE, False, "repeats the request"),
    ("opposite of generous is generous.", "opposite of generous?", False, "repeats the request"),
    # Seen 120 times in a row; a loop is 8+ copies over 160+ characters (agent/repetition).
    ("Done: " + "```markdown " * 20, "Create a file called x.txt.", False, "loop"),
])
def test_defects_are_named(answer: str, prompt: str, made: bool, reason: str) -> None:
    defect = answer_defect(answer, prompt, made_document=made)
    assert defect is not None and reason in defect


@pytest.mark.parametrize(("answer", "prompt", "made"), [
    ("Here is the table “Planets” (4 rows × 2 columns).", "Make a table of planets.", True),
    ("Saved the note “Groceries”:\n\n> milk, eggs, bread", _NOTE, False),
    # Without a document a Markdown table in the chat is the answer itself.
    ("| km | miles |\n|---|---|\n| 5 | 3.11 |", "Convert 5 km to miles as a table.", False),
    ("```python\ndef f(): pass\n```", "Write a Python function that does nothing.", True),
    ("The total is 166.39.", "What is the total of the amount column in expenses.csv?", False),
    # The request restated with its result is an answer, not an echo (held-out split: both
    # were right and failed as echoes).
    ("4821 × 7396 = 35656116", "4821 × 7396 =", False),
    ("The chemical symbol for silver is \\(Ag\\).", "chemical symbol for silver?", False),
])
def test_good_answers_pass(answer: str, prompt: str, made: bool) -> None:
    assert answer_defect(answer, prompt, made_document=made) is None
