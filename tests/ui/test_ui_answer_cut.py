"""The footer says why an answer stopped early, live and after the chat is reopened."""

from __future__ import annotations

import pytest
from ui_helpers import make_window

from desktop_app.core.llm.testing import ScriptedLLM
from desktop_app.core.llm.types import ChatMessage, LLMResult, Usage

pytestmark = pytest.mark.gui


def _footer(turn) -> str:
    return turn.footer.text().replace("\u00a0", " ").replace("\u2060", "")


@pytest.mark.parametrize(("reply", "reason"), [
    (LLMResult(message=ChatMessage.assistant("Once upon a time a fox walked in a circle. Tim"),
               finish_reason="length", usage=Usage.of(40, 64)),
     "cut at the length limit"),
    ("A fox runs. " + "Round and round. " * 80, "stopped: the model began repeating itself"),
])
def test_the_footer_says_why_the_answer_stopped(qtbot, loop, reply, reason) -> None:
    llm = ScriptedLLM([reply], tool_call=True)

    async def scenario():
        window = await make_window(qtbot, llm)
        window.controller.agent_options = {"guard_repetition": True}
        await window.send("Write a story about a fox.")
        await window.controller.wait_idle()
        live = _footer(window.chat.items()[-1])
        conv_id = window.conversation_id
        window.new_conversation()
        await window.open_conversation(conv_id)
        return live, _footer(window.chat.items()[-1])

    live, reopened = loop.run_until_complete(scenario())
    assert reason in live, live
    assert reason in reopened, reopened


class SlowLoading(ScriptedLLM):
    """Takes ``seconds`` to load, as a model does on its first answer."""

    def __init__(self, seconds: float, **kwargs) -> None:
        super().__init__(**kwargs)
        self.seconds, self.loaded = seconds, False

    async def load(self) -> None:
        import asyncio

        await asyncio.sleep(self.seconds)
        self.loaded = True


def test_the_footer_times_count_from_send_loading_included(qtbot, loop) -> None:
    """The first answer after install waited 26 s and its footer said "first word 0.4 s"."""
    import re

    llm = SlowLoading(1.0, replies=["Hello there."], tool_call=True)

    async def scenario():
        window = await make_window(qtbot, llm)
        await window.send("Hi")
        await window.controller.wait_idle()
        return _footer(window.chat.items()[-1])

    footer = loop.run_until_complete(scenario())
    first_word = float(re.search(r"first word (\d+\.\d) s", footer).group(1))
    total = float(re.search(r"·\s+(\d+\.\d) s\s", footer).group(1))
    assert first_word >= 1.0 and total >= first_word, footer
