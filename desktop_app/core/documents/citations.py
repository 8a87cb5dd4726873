"""Reading back the passages a ``search_documents`` call gave the model, so the window can
turn "[2]" in an answer into a link to that passage (hover: its text; click: the document
at that place). The tool's text is the record: it is stored with the run's tool step, so
citations in a conversation reopened next week still resolve."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

#: "[3] Home/manuals/washer.pdf, page 2" — a passage's header line in the tool's result.
_HEADER = re.compile(r"^\[(\d{1,4})\] (\S[^\n]*)$", re.MULTILINE)
_PAGE = re.compile(r"^(.*), page (\d+)$")


@dataclass(frozen=True)
class CitedPassage:
    number: int
    label: str
    collection: str
    relative_path: str
    page: int | None
    heading: str
    text: str


def parse_label(label: str) -> tuple[str, str, int | None, str]:
    """(collection, path relative to its folder, page, heading) of a passage label."""
    page: int | None = None
    heading = ""
    where = label
    match = _PAGE.match(label)
    if match:
        where, page = match.group(1), int(match.group(2))
    elif " › " in label:
        where, heading = label.split(" › ", 1)
    collection, _, relative = where.partition("/")
    return collection, relative, page, heading


def parse_passages(observations: Iterable[str]) -> dict[int, CitedPassage]:
    """Passages by number from ``search_documents`` results (later calls add numbers)."""
    passages: dict[int, CitedPassage] = {}
    for text in observations:
        headers = list(_HEADER.finditer(text))
        for index, header in enumerate(headers):
            end = headers[index + 1].start() if index + 1 < len(headers) else len(text)
            body = text[header.end():end].strip()
            body = body.split("\n\nAnswer from these passages", 1)[0].strip()
            collection, relative, page, heading = parse_label(header.group(2))
            if not relative:
                continue
            number = int(header.group(1))
            passages[number] = CitedPassage(number, header.group(2), collection, relative,
                                            page, heading, body)
    return passages


_WORD = re.compile(r"[A-Za-z][A-Za-z'-]{2,}|\d+(?:[.,]\d+)*")
_CITED = re.compile(r"\[(\d{1,4})\]")
_SMALL = frozenset("""the and for are was were with that this from have has had not but you your
your what which when where who how does did can could would should will into than then them
they their there these those about based tool output passage passages document documents
according answer question states""".split())  # noqa: SIM905 - a word list reads best as text


def _tokens(text: str) -> set[str]:
    return {t.lower().replace(",", "") for t in _WORD.findall(text)
            if t.lower() not in _SMALL}


def citation_suffix(answer: str, observations: Iterable[str], query: str = "") -> str:
    """" [n]" (or " [n][m]") for the passages an answer's content came from, when the
    model cited none itself; "" when it did, or when no passage shares enough with it.

    Small local models answer from the passages but seldom cite them (the bundled 0.5B
    model: 1 of 8 answers in the evaluation, measured). A passage is credited by the words
    and numbers it shares with the answer — numbers count double, words the question
    already had count half (the answer repeats the question) — needing a score of 2, and
    within 60 % of the best passage.
    """
    passages = parse_passages(observations)
    if not passages or any(int(n) in passages for n in _CITED.findall(answer)):
        return ""
    said = _tokens(_HEADER.sub("", answer))
    asked = _tokens(query)
    scores: dict[int, float] = {}
    for number, passage in passages.items():
        shared = said & _tokens(passage.text)
        scores[number] = sum((2.0 if token[0].isdigit() else 1.0)
                             * (0.5 if token in asked else 1.0) for token in shared)
    best = max(scores.values())
    if best < 2.0:
        return ""
    chosen = sorted(n for n, s in scores.items() if s >= 0.6 * best)[:2]
    return " " + "".join(f"[{n}]" for n in chosen)
