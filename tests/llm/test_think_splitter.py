"""ThinkSplitter: <think> blocks split into reasoning, the same wherever the stream is cut."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from desktop_app.core.llm.think_splitter import ThinkSplitter, split_think


def run(pieces: list[str]) -> tuple[str, str, list[tuple[str, str]]]:
    """Feed pieces one by one; return joined content, joined reasoning and every output."""
    splitter = ThinkSplitter()
    outputs = [splitter.feed(piece) for piece in pieces] + [splitter.flush()]
    pairs = [(out.content, out.reasoning) for out in outputs]
    return "".join(c for c, _ in pairs), "".join(r for _, r in pairs), pairs


def cuts(text: str, positions: tuple[int, ...]) -> list[str]:
    bounds = [0, *positions, len(text)]
    return [text[a:b] for a, b in itertools.pairwise(bounds)]


CASES = [
    # (raw message, expected content, expected reasoning)
    ("<think>I should greet.</think>Hello!", "Hello!", "I should greet."),
    ("<think>\nplan\n</think>\n\nAnswer", "Answer", "plan"),
    ("  <think>a < b and c </ d</think> ok", "ok", "a < b and c </ d"),
    ("<think></think>Just the answer", "Just the answer", ""),
    ("No thinking here.", "No thinking here.", ""),
    ("<think>cut off by max_tok", "", "cut off by max_tok"),
    ("<think>cut off </thi", "", "cut off </thi"),
    ("Use <think> like <think>x</think>.", "Use <think> like <think>x</think>.", ""),
    ("<thinking is not the tag", "<thinking is not the tag", ""),
    ("<thi", "<thi", ""),
    ("   ", "   ", ""),
    ("<think>one\n\ntwo</think>three\n\nfour", "three\n\nfour", "one\n\ntwo"),
    ("<think>nested <think> stays</think>x", "x", "nested <think> stays"),
]


@pytest.mark.parametrize(("raw", "content", "reasoning"), CASES)
def test_whole_message_splits_as_documented(raw: str, content: str, reasoning: str) -> None:
    assert split_think(raw) == (content, reasoning)


@pytest.mark.parametrize(("raw", "content", "reasoning"), CASES)
def test_every_single_split_position_gives_the_same_result(raw: str, content: str,
                                                           reasoning: str) -> None:
    for position in range(len(raw) + 1):
        got_content, got_reasoning, _ = run(cuts(raw, (position,)))
        assert (got_content, got_reasoning) == (content, reasoning), f"cut at {position}"


@pytest.mark.parametrize(("raw", "content", "reasoning"), CASES[:4])
def test_every_pair_of_split_positions_gives_the_same_result(raw: str, content: str,
                                                             reasoning: str) -> None:
    for a, b in itertools.combinations_with_replacement(range(len(raw) + 1), 2):
        got_content, got_reasoning, _ = run(cuts(raw, (a, b)))
        assert (got_content, got_reasoning) == (content, reasoning), f"cuts at {a}, {b}"


@pytest.mark.parametrize(("raw", "content", "reasoning"), CASES)
def test_character_by_character_stream_gives_the_same_result(raw: str, content: str,
                                                             reasoning: str) -> None:
    got_content, got_reasoning, _ = run(list(raw))
    assert (got_content, got_reasoning) == (content, reasoning)


@settings(max_examples=300, deadline=None)
@given(
    reasoning=st.text(alphabet="ab <>/\nthink", max_size=30),
    answer=st.text(alphabet="xy <>/\nthink", max_size=30),
    data=st.data(),
)
def test_random_chunking_never_changes_the_split(reasoning: str, answer: str,
                                                 data: st.DataObject) -> None:
    raw = f"<think>{reasoning}</think>{answer}"
    positions = data.draw(st.lists(st.integers(0, len(raw)), max_size=8).map(sorted))
    expected = split_think(raw)
    got_content, got_reasoning, _ = run(cuts(raw, tuple(positions)))
    assert (got_content, got_reasoning) == expected
    # Nothing is invented or lost beyond the tags and the template whitespace around them.
    if "</think>" not in reasoning:
        assert expected[1] == reasoning.strip()
        assert expected[0] == answer.lstrip()


def test_text_is_released_as_soon_as_it_cannot_be_a_tag() -> None:
    splitter = ThinkSplitter()
    assert splitter.feed("<think>").reasoning == ""
    assert splitter.in_think
    assert splitter.feed("weighing options").reasoning == "weighing options"
    # "</th" might be the closing tag: held back, not shown as reasoning yet.
    held = splitter.feed(" </th")
    assert held.reasoning == "" and held.content == ""
    assert splitter.feed("ink>Answer").content == "Answer"
    assert not splitter.in_think


def test_answer_without_think_streams_without_delay() -> None:
    _, _, pairs = run(["Hello", " world", "!"])
    assert pairs[:3] == [("Hello", ""), (" world", ""), ("!", "")]


def test_a_possible_opening_tag_is_held_until_it_is_decided() -> None:
    splitter = ThinkSplitter()
    assert not splitter.feed("<th")
    out = splitter.feed("e answer")
    assert out.content == "<the answer" and out.reasoning == ""


def test_tag_mentioned_after_the_answer_started_stays_in_the_content() -> None:
    content, reasoning, _ = run(["Answer first. ", "<think>", "not reasoning", "</think>"])
    assert content == "Answer first. <think>not reasoning</think>"
    assert reasoning == ""


def test_unclosed_block_is_all_reasoning_after_flush() -> None:
    content, reasoning, _ = run(["<think>step 1", "\nstep 2\n"])
    assert (content, reasoning) == ("", "step 1\nstep 2")


def test_a_block_the_prompt_opened_ends_at_the_close_tag() -> None:
    splitter = ThinkSplitter(inside=True)
    parts = [splitter.feed(piece) for piece in ("\nLet me add. 2+2", "=4.\n</th", "ink>\n\n4")]
    parts.append(splitter.flush())
    assert "".join(p.reasoning for p in parts) == "Let me add. 2+2=4."
    assert "".join(p.content for p in parts) == "4"


def test_a_prompt_ending_in_an_open_think_tag_is_recognised() -> None:
    from desktop_app.core.llm.llama_generation import prompt_opens_think

    class Detok:
        def __init__(self, text: str) -> None:
            self.text = text

        def detokenize(self, tokens: list[int]) -> bytes:
            return self.text.encode()

    assert prompt_opens_think(Detok("<|im_start|>assistant\n<think>\n"), [1, 2])
    assert not prompt_opens_think(Detok("<think>\n\n</think>\n\n"), [1, 2])  # thinking off
    assert not prompt_opens_think(Detok("<|im_start|>assistant\n"), [1])
    assert not prompt_opens_think(Detok("<think>"), [])
