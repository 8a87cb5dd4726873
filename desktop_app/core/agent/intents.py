"""Requests that name their tool: "Make a table of …", "Draw a bar chart of …", "Save a
note titled …", "Create a file called …".

When the request *starts* with such a command, the first model turn is a forced call of
that tool (a grammar for local models, ``tool_choice`` for hosted ones): the model still
writes every argument, it only cannot answer in prose instead. Measured on the bundled
0.5B model: asked to "make a table" it wrote a Markdown table into the chat 4 times out of
6, and "create a file called shopping.txt" was answered without writing the file.

Only a command at the start counts. "Convert 5 km to miles and show the results in a
table" must convert first, so it is left to the model, as is anything phrased as a
question ("can you explain what a table is?").
"""

from __future__ import annotations

import re

from desktop_app.core.tools.base import ToolRegistry

_POLITE = r"^\s*(?:please\s+|could you\s+|can you\s+|would you\s+)?"
_MAKE = r"(?:make|create|draw|build|produce|generate|plot|prepare|write)\s+(?:me\s+)?"
_A = r"(?:a|an|the)?\s*(?:\w+\s+){0,2}?"

#: (pattern at the start of the request, tool) in order of precedence.
_COMMANDS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(_POLITE + pattern, re.IGNORECASE), tool) for pattern, tool in (
        (_MAKE + _A + r"(?:bar\s+|line\s+)?(?:chart|graph|plot)\b", "make_chart"),
        (r"(?:plot|chart)\s+", "make_chart"),
        (_MAKE + _A + r"table\b", "make_table"),
        (_MAKE + _A + r"report\b", "make_report"),
        (r"(?:save|make|create|add|write)\s+(?:a\s+|me\s+a\s+)?note\b", "note_create"),
        (r"(?:create|write|make|save)\s+(?:a\s+|the\s+)?(?:new\s+)?file\s+(?:called|named)\b",
         "write_file"),
    ))


def commanded_tool(query: str, registry: ToolRegistry) -> str | None:
    """The tool a request starting with an explicit command names, if it is offered."""
    first_sentence = query.strip().split("\n", 1)[0]
    for pattern, tool in _COMMANDS:
        if pattern.match(first_sentence) and tool in registry:
            return tool
    return None


#: Requests that are work on the text in the message itself. Asked "Fix the grammar: 'She
#: don't like apples.'", the bundled model saved a note (1 run in 2); these are answered in
#: text, streamed as they are written.
_TEXT_TASK = re.compile(
    _POLITE + r"(?:translate|proofread|paraphrase|rephrase|reword|rewrite|spell[- ]?check|"
    r"(?:fix|correct|check|improve)\s+(?:the\s+)?(?:grammar|spelling|wording|punctuation)|"
    r"summari[sz]e\s+(?:this|the\s+following)|"
    r"(?:write|compose)\s+(?:me\s+)?(?:a|an)\s+(?:short\s+)?"
    r"(?:poem|haiku|limerick|story|song|joke|riddle|slogan|tweet)|"
    r"tell\s+me\s+a\s+(?:joke|story|riddle))\b", re.IGNORECASE)
#: ...unless it points at something a tool must fetch first.
_NEEDS_LOOKUP = re.compile(r"\b[\w-]+\.[A-Za-z]{2,4}\b|\bnotes?\b|\bfiles?\b|\bfolder\b|"
                           r"https?://|\bworkspace\b", re.IGNORECASE)


def is_text_task(query: str) -> bool:
    """The request is about text it contains itself ("Translate 'good morning' into
    Spanish", "Fix the grammar: …", "Write a haiku about …"): no tool can help."""
    text = query.strip()
    return bool(_TEXT_TASK.match(text)) and not _NEEDS_LOOKUP.search(text)
