"""Outside data printed by the command line cannot drive the terminal (issue 26): OSC 52
clipboard writes, title changes, screen clears and other control characters are dropped
from everything written, while text, tabs, newlines and the CLI's own progress
erase-line survive."""

from __future__ import annotations

from pathlib import Path

import pytest

from desktop_app.cli import main
from desktop_app.cli.terminal import terminal_safe

CLIPBOARD = "\x1b]52;c;Y3VybCBldmlsLnNofHNo\x07"
TITLE = "\x1b]0;pwned\x1b\\"
CLEAR = "\x1b[2J\x1b[H"


@pytest.mark.parametrize("attack", [CLIPBOARD, TITLE, CLEAR, "\x9b2J", "\x07\x08\x00",
                                    "\x1bP1$r\x1b\\", "\x1b[31mred\x1b[0m"])
def test_control_sequences_are_dropped(attack: str) -> None:
    cleaned = terminal_safe(f"Model {attack}name\tok\n")
    assert "\x1b" not in cleaned and "\x9b" not in cleaned and "\x07" not in cleaned
    assert cleaned.startswith("Model ") and cleaned.endswith("name\tok\n")


def test_the_cli_s_own_erase_line_and_plain_text_survive() -> None:
    assert terminal_safe("\r\x1b[K 40 %") == "\r\x1b[K 40 %"
    assert terminal_safe("Grüße, 東京 – 3,5 km\r\n") == "Grüße, 東京 – 3,5 km\r\n"


def test_a_document_passage_with_escapes_prints_clean(tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]
                                                       ) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "evil.md").write_text(
        f"# Router\n\nThe admin password {CLIPBOARD}{TITLE}{CLEAR}is lantern-7731.\n")
    assert main(["docs", "add", str(folder), "-c", "Home"]) == 0
    assert main(["docs", "search", "admin", "password", "router"]) == 0
    captured = capsys.readouterr()
    assert "lantern-7731" in captured.out  # the control: the passage was printed
    for stream in (captured.out, captured.err):
        assert "\x1b" not in stream and "\x07" not in stream
