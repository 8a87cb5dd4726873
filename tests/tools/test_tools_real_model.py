"""An assistant tool driven by the real bundled model (Qwen2.5-Coder-0.5B via llama.cpp, its
own tool-call format): the model picks the tool, writes valid arguments, the tool reads real note files, and
the run completes. (Measured here: asked to *compute* with convert_units or an MCP adder, the
0.5B model mostly answers from memory, wrongly — so those paths are tested with scripted
models against the real tools and a real MCP server, and this test uses a lookup the model
reliably delegates.)"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

import pytest

from desktop_app.core.agent import ReActAgent, drive_run
from desktop_app.core.tools.base import ToolRegistry
from desktop_app.core.tools.builtin.notes import NoteStore, note_tools

log = logging.getLogger(__name__)
pytestmark = pytest.mark.real_model


def test_bundled_model_looks_up_notes_with_the_notes_tool(bundled_llm: Any) -> None:
    NoteStore().create("Groceries", "milk, eggs")
    agent = ReActAgent(bundled_llm, ToolRegistry(note_tools()), max_iterations=2,
                       max_tokens=160, temperature=0.0)
    started = time.monotonic()
    outcome = asyncio.run(drive_run(agent, "Which notes do I have? Look them up with notes_find.",
                                    emit=lambda event: None))
    result = outcome.result
    assert result is not None, outcome.error
    log.warning("real notes run: %.1f s, steps %s, answer %r", time.monotonic() - started,
                [(s.tool, s.args, s.observation, s.error) for s in result.steps], outcome.answer)
    calls = [s for s in result.steps if s.tool == "notes_find" and s.error is None]
    assert calls, f"the model never made a valid notes_find call: {result.steps}"
    # The tool really ran against the notes folder (a query may or may not match the note).
    assert all(c.observation.startswith(("1 note(s)", "No notes match")) for c in calls)
    assert outcome.answer.strip() and outcome.error is None  # both phases: loop, then answer
