"""What makes an answer wrong whatever it says: checked on every task, before its own
conditions.

A task's checks look at the fact it asks for (a number, a note, a table). These look at
what a person reads in the chat: a tool call printed instead of a reply, the source of a
document the preview pane already shows, the request repeated back, a loop. Each was seen
on the bundled 0.5B model in tasks that passed their own checks (chart HTML and Markdown
copies of tables after "Make a …", ``note_create({...})`` and "Save a note titled …" after
a note was saved, "```markdown" 120 times after a file was written).
"""

from __future__ import annotations

import re

from desktop_app.core.agent.repetition import repeated_tail

#: Tool-call syntax (``{"name": "calculator", "arguments": ...}``, a tag, or
#: ``note_create({...})``): the model printed a call instead of answering.
_CALL_TEXT = re.compile(r'<tool_call>|\{\s*"name"\s*:\s*"[\w.-]+"\s*,\s*"(?:arguments|parameters)"'
                        r"|\b[a-z]+(?:_[a-z]+)+\s*\(\s*\{")
#: Markup of a made document, or a block that holds it.
_SOURCE = re.compile(r"<(?:!doctype|html|head|body|svg|table|div|script|style)\b"
                     r"|```\s*(?:html|markdown|md|json|svg)\b", re.IGNORECASE)
_TABLE_ROW = re.compile(r"^\s*\|.*\|\s*$", re.MULTILINE)


def _words(text: str) -> str:
    return " ".join(re.findall(r"\w+", text.lower()))


#: Words that hold no answer of their own, in the suite's languages: the request said back
#: with only these around it is still the request ("opposite of generous is generous").
_FILLER = frozenset({
    "a", "an", "the", "is", "are", "was", "were", "be", "it", "its", "this", "that", "of",
    "to", "in", "for", "and", "or", "so", "here", "your", "you", "i", "sure", "ok", "okay",
    "certainly", "alright", "well", "course", "der", "die", "das", "ist", "es", "ein",
    "eine", "und", "von", "zu", "el", "la", "los", "las", "un", "una", "y", "de", "que",
    "le", "les", "est", "c", "et", "une", "du", "des",
})


def echoes(answer: str, prompt: str) -> bool:
    """The answer is the request said back, with at most filler words around it. An answer
    that restates the request and adds its result ("4821 × 7396 = 35656116", "The
    chemical symbol for silver is Ag") is not an echo."""
    said, asked = _words(answer), _words(prompt)
    if not asked or asked not in said or len(said) > len(asked) * 1.2 + 10:
        return False
    return not set(said.split()) - set(asked.split()) - _FILLER


def answer_defect(answer: str, prompt: str, *, made_document: bool) -> str | None:
    """Why ``answer`` fails whatever the task expects, or None."""
    if _CALL_TEXT.search(answer):
        return "the answer shows tool-call text instead of a reply"
    if made_document and _SOURCE.search(answer):
        return "the answer repeats the document's source, which the preview pane shows"
    if made_document and len(_TABLE_ROW.findall(answer)) >= 2:
        return "the answer copies the table the preview pane shows"
    if echoes(answer, prompt):
        return "the answer repeats the request"
    if repeated_tail(answer.rstrip()) or repeated_tail(answer):
        return "the answer repeats itself (a loop)"
    return None
