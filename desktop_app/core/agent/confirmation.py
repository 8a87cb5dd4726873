"""The answer to a request that was one command ("Make a table of …", "Save a note …"),
written from the tool's own confirmation instead of by the model.

Once the commanded tool has succeeded there is nothing left to say but that it was done
and what was made. Asked to say it, the bundled 0.5B model repeated what the preview pane
already showed or echoed the request: in the eval's document and note tasks it wrote the
chart's HTML source, Markdown copies of the tables, a ``note_create({...})`` call as text,
"Save a note titled 'Groceries' …" back to the user, and once "```markdown" until its
token limit (31 s). The tool knows what it made; its words are exact and cost no
generation. Hosted models still write their own answer (``ReActAgent.confirm_commands``).
When every try failed, the tool's error is the answer for the same reason.
"""

from __future__ import annotations

from desktop_app.core.agent.result import StepRecord
from desktop_app.core.tools.base import ToolRegistry


def command_confirmation(steps: list[StepRecord], commanded_tool: str | None,
                         registry: ToolRegistry, chained: bool = False) -> str:
    """The confirmation of the last successful call of ``commanded_tool``, or "" when it
    has none; for a chained request ("Calculate 15% of 240 and save it in a note") the
    last computed result comes first, so the answer states it."""
    done = [step for step in steps if step.error is None]
    made = next((step for step in reversed(done)
                 if step.tool == commanded_tool and step.confirmation), None)
    if made is None or made.confirmation is None:
        return ""
    if not chained:
        return made.confirmation
    computed = [step for step in done if step.observation and step.tool in registry
                and registry.get(step.tool).read_only and step is not made]
    if not computed:
        return made.confirmation
    result = computed[-1].observation.strip().splitlines()[0]
    return f"{result}\n\n{made.confirmation}"


def command_failure(steps: list[StepRecord], commanded_tool: str | None) -> str:
    """What to tell the user when every try of ``commanded_tool`` failed, or "" when it
    did not run. Asked to write this answer, the bundled model printed the failed call's
    arguments as JSON (the eval's line-chart task); the tool's own error says what to fix."""
    tries = [step for step in steps if step.tool == commanded_tool]
    if not tries or any(step.error is None for step in tries):
        return ""
    error = (tries[-1].error or "").strip().rstrip(".")
    times = "once" if len(tries) == 1 else f"{len(tries)} times"
    return f"I could not carry that out (tried {times}): {error}."
