"""Files the user names in a question are read before the model's first turn.

"What is the total of the amount column in expenses.csv?" is about that file; a small
local model nonetheless answered it with an SQL query (and a made-up owner for
"meeting-notes.txt") instead of reading it: 0 of 7 such eval tasks called ``read_file``.
So, like attaching a file, the agent reads each named workspace file itself, as an
ordinary ``read_file`` call the user sees as a tool card and the model sees as its own
call and result. Names that are not files in the workspace are left alone.

The same holds for "… in my notes": the model answered "the password is not in my notes"
without looking, so a question that names the user's notes starts with a ``notes_find``
for it (the search drops the question's small words).

And a chat with document collections attached starts with a ``search_documents`` for the
question, as local-document assistants do: the passages are what the user attached them
for, and a small model left to decide answers from memory.
"""

from __future__ import annotations

import json
import re

from desktop_app.core.agent.state import RunState
from desktop_app.core.errors import DesktopAppError
from desktop_app.core.llm.types import ChatMessage, ToolCall

#: A file name with an extension, optionally with folders: "expenses.csv", "notes/todo.md".
_FILE_NAME = re.compile(r"(?<![\w/.-])((?:[\w-]+/)*[\w][\w.-]*\.[A-Za-z][A-Za-z0-9]{0,4})(?![\w/])")
_MAX_FILES = 3
_MY_NOTES = re.compile(r"\bmy\s+notes?\b", re.IGNORECASE)


def mentioned_files(text: str) -> list[str]:
    """File-like names in ``text``, in order, without duplicates (at most three)."""
    names: list[str] = []
    for match in _FILE_NAME.finditer(text):
        name = match.group(1).rstrip(".")
        if "." in name and name not in names:
            names.append(name)
    return names[:_MAX_FILES]


async def read_mentioned_files(state: RunState) -> None:
    """Run ``read_file`` for each workspace file ``state.query`` names (native mode)."""
    if state.executor is None or "read_file" not in state.registry:
        return
    workspace = getattr(state.registry.get("read_file"), "workspace", None)
    if workspace is None:
        return
    for index, name in enumerate(mentioned_files(state.query)):
        try:
            is_file = workspace.resolve(name).is_file()
        except (DesktopAppError, OSError):
            is_file = False  # outside, missing or unreadable: the model never hears of it
        if not is_file:
            continue
        await _run_first(state, "read_file", {"path": name}, f"call_attach_{index}")


async def search_named_notes(state: RunState) -> None:
    """Run ``notes_find`` for a question that says the answer is in the user's notes."""
    if state.executor is None or "notes_find" not in state.registry:
        return
    if _MY_NOTES.search(state.query):
        await _run_first(state, "notes_find", {"query": state.query}, "call_attach_notes")


async def search_attached_documents(state: RunState) -> None:
    """Run ``search_documents`` for the question when the chat has collections attached."""
    if state.executor is None or "search_documents" not in state.registry:
        return
    if state.commanded_tool:  # "Save a note …": a command, not a question about them
        return
    await _run_first(state, "search_documents", {"query": state.query}, "call_search_documents")


async def _run_first(state: RunState, tool: str, args: dict[str, object], call_id: str) -> None:
    """Execute one call before the model's first turn, recorded as the model's own."""
    assert state.executor is not None
    step = await state.executor.execute(tool, args, iteration=0, call_id=call_id)
    state.steps.append(step)
    state.messages.append(ChatMessage.assistant("", tool_calls=[ToolCall(
        id=call_id, name=tool, arguments=json.dumps(args))]))
    state.messages.append(ChatMessage.tool(step.observation if not step.error
                                           else f"ERROR: {step.error}",
                                           tool_call_id=call_id, name=tool))
