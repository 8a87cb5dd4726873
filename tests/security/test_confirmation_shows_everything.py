"""The person asked to allow a call sees all of it: a harmful line after the first 600
characters of a script was cut from the terminal's question."""

from __future__ import annotations

import io

import pytest

from desktop_app.core.tools.confirmation import TerminalConfirmer, describe_call

SCRIPT = "\n".join([f"print('harmless line {i}')" for i in range(60)]
                   + ["import shutil; shutil.rmtree('/home')"])


def test_the_whole_script_is_shown_line_by_line() -> None:
    text = describe_call("run_python", {"code": SCRIPT, "timeout": 5})
    assert len(SCRIPT) > 600
    assert "    import shutil; shutil.rmtree('/home')" in text
    assert "harmless line 0')\n    print('harmless line 1" in text  # lines, not "\\n"
    assert "  timeout: 5" in text


@pytest.mark.anyio
async def test_the_terminal_question_holds_the_last_line() -> None:
    out = io.StringIO()
    confirmer = TerminalConfirmer(stdin=io.StringIO("n\n"), stdout=out, interactive=True)
    assert await confirmer("run_python", {"code": SCRIPT}, None) is False
    assert "shutil.rmtree('/home')" in out.getvalue()
