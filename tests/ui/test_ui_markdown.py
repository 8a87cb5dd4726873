"""Markdown rendering and the streaming view: same result as a one-shot render, flat cost."""

from __future__ import annotations

import random

import pytest

from desktop_app.ui.markdown_render import (
    CodeSegment,
    ProseSegment,
    find_fence_open,
    render_segments,
    stable_split,
)
from desktop_app.ui.markdown_view import CodeBlockWidget, MarkdownView

pytestmark = pytest.mark.gui

DOC = """# Title

Some *prose* with `code` and a [link](https://example.com).

```python
def f(x):
    return x * 2
```

| a | b |
|---|---|
| 1 | 2 |

~~~
plain block
~~~

- one
- two

<script>alert(1)</script>
"""


def test_segments_split_code_from_prose_and_escape_raw_html() -> None:
    segments = render_segments(DOC)
    kinds = [type(s).__name__ for s in segments]
    assert kinds == ["ProseSegment", "CodeSegment", "ProseSegment", "CodeSegment", "ProseSegment"]
    code = [s for s in segments if isinstance(s, CodeSegment)]
    assert code[0].language == "python" and code[0].code.startswith("def f(x):")
    assert code[1].language == "" and code[1].code == "plain block"
    prose = "".join(s.html for s in segments if isinstance(s, ProseSegment))
    assert "<table>" in prose and "<h1>" in prose
    assert "<script>" not in prose and "&lt;script&gt;" in prose


def test_fence_and_split_helpers() -> None:
    text = "intro\n\n```js\nlet a = 1;\n"
    fence = find_fence_open(text)
    assert fence is not None and fence.language == "js" and text[fence.body_start:] == "let a = 1;\n"
    assert find_fence_open("no fence ```inline``` here\n") is None
    assert stable_split("short\n\nx", 100) == 0
    long = "p" * 150 + "\n\n" + "tail"
    assert stable_split(long, 100) == 152


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_streaming_in_random_pieces_ends_like_a_one_shot_render(qtbot, seed) -> None:
    text = (DOC + "\n\n" + "A paragraph that goes on. " * 80 + "\n\n") * 3
    rng = random.Random(seed)
    view = MarkdownView()
    qtbot.addWidget(view)
    view.start_stream()
    pos = 0
    while pos < len(text):
        step = rng.randint(1, 12)
        view.append(text[pos:pos + step])
        pos += step
        if rng.random() < 0.3:
            view.flush()
    view.finish_stream()
    assert view.text() == text
    streamed = [b.code for b in view.code_blocks()]
    expected = [s.code for s in render_segments(text) if isinstance(s, CodeSegment)]
    assert streamed == expected


def test_an_open_code_fence_streams_into_its_code_widget(qtbot) -> None:
    view = MarkdownView()
    qtbot.addWidget(view)
    view.start_stream()
    view.append("Here:\n\n```python\nprint(1)\nprint(2)\n")
    view.flush()
    blocks = view.code_blocks()
    assert len(blocks) == 1 and blocks[0].code == "print(1)\nprint(2)\n"
    view.append("print(3)\n``")  # the closing fence is still arriving
    view.flush()
    assert view.code_blocks()[0].code.endswith("print(3)\n")
    view.append("`\n\nAfter.")
    view.finish_stream()
    assert [b.code for b in view.code_blocks()] == ["print(1)\nprint(2)\nprint(3)"]


def test_long_answers_commit_chunks_and_keep_the_widget_count_small(qtbot) -> None:
    view = MarkdownView()
    qtbot.addWidget(view)
    view.start_stream()
    paragraph = "word " * 60 + "\n\n"
    for _ in range(200):  # ~60 KB
        view.append(paragraph)
        view.flush()
    view.finish_stream()
    widgets = view.segment_widgets()
    assert 10 < len(widgets) < 120  # chunked, not one widget per paragraph or per token
    assert not any(isinstance(w, CodeBlockWidget) for w in widgets)


def test_the_rerendered_tail_stays_short_however_long_the_answer(qtbot) -> None:
    """Streaming cost is flat: each frame re-renders only the unstable tail, never the answer."""
    view = MarkdownView()
    qtbot.addWidget(view)
    view.start_stream()
    paragraph = "A sentence that keeps going. " * 12 + "\n\n"
    longest_tail = 0
    for i in range(300):  # ~110 KB
        for start in range(0, len(paragraph), 5):
            view.append(paragraph[start:start + 5])
        view.flush()
        longest_tail = max(longest_tail, len(view.text()) - view._committed)
    view.finish_stream()
    assert len(view.text()) > 100_000
    assert longest_tail < 2 * 1200 + len(paragraph)


def test_single_line_breaks_are_kept() -> None:
    from desktop_app.ui.markdown_render import render_html

    html = render_html("Waves fold into foam,\nsalt wind carries gull voices,\nthe tide.")
    assert html.count("<br") == 2


def test_a_star_between_digits_is_multiplication_not_italics() -> None:
    from desktop_app.ui.markdown_render import render_html

    assert render_html("12*12 + 7*8 = 200") == "<p>12*12 + 7*8 = 200</p>"
    assert "<em>word</em>" in render_html("a *word* and 2*3")
    assert "<code>2*3</code>" in render_html("code `2*3` here")  # code spans untouched
    assert "<strong>bold</strong>" in render_html("**bold** 3*4")
