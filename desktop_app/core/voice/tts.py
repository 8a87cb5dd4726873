"""Text to speech with Piper (offline), and the text worth reading aloud.

Piper (``piper-tts``) is GPL-3.0; the app (Apache-2.0) runs it as a separate program (this
app's own ``voice _piper`` entry, in a child process) rather than importing it, which also
keeps ONNX Runtime's memory out of the window's process.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from desktop_app.core.voice.models import VoiceError, piper_voice

#: Seconds a synthesis may take (long answers: about 0.1 s of work per second of speech).
SYNTH_TIMEOUT = 300


def app_command() -> list[str]:
    """How to start this app's command line in a child process (frozen or not)."""
    if getattr(sys, "frozen", False):
        return [sys.executable]
    return [sys.executable, "-m", "desktop_app"]


def synthesize(text: str, output: Path, *, speed: float = 1.0) -> Path:
    """Speak ``text`` into the WAV file ``output`` (22.05 kHz mono)."""
    spoken = speakable(text)
    if not spoken:
        raise VoiceError("There is nothing to read aloud in that text.")
    if not 0.25 <= speed <= 4:
        raise VoiceError("The speed must be between 0.25 and 4.")
    output.parent.mkdir(parents=True, exist_ok=True)
    command = [*app_command(), "voice", "_piper", "-m", str(piper_voice()), "-f", str(output),
               "--length-scale", f"{1 / speed:.3f}"]
    try:
        done = subprocess.run(command, input=spoken.replace("\n", " "), text=True,
                              capture_output=True, timeout=SYNTH_TIMEOUT, check=False)
    except subprocess.TimeoutExpired:
        raise VoiceError("Reading aloud took too long and was stopped.") from None
    if done.returncode != 0 or not output.exists() or output.stat().st_size <= 44:
        detail = (done.stderr or "").strip().splitlines()[-1:] or ["no message"]
        raise VoiceError(f"The voice could not speak that text ({detail[0]}).")
    return output


_CODE_BLOCK = re.compile(r"```.*?(```|$)", re.DOTALL)
_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_CITATION = re.compile(r"\[\d+(?:[,\s]*\d+)*\]")


def speakable(markdown: str) -> str:
    """What a listener should hear of a Markdown answer: code blocks, tables, citation
    marks, link targets and formatting symbols are not read out."""
    text = _CODE_BLOCK.sub(" (code shown on screen) ", markdown)
    text = _LINK.sub(r"\1", text)
    text = _CITATION.sub("", text)
    lines = []
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("|") or re.fullmatch(r"[-:| ]+", stripped or "x"):
            continue  # tables are for the eye
        marked = re.match(r"^(#{1,6}\s+|[-*+]\s+|\d+[.)]\s+|>\s*)", stripped)
        stripped = stripped[marked.end():] if marked else stripped
        if marked and stripped and stripped[-1] not in ".!?:;,":
            stripped += "."  # a heading or a list item is a phrase of its own when heard
        lines.append(stripped)
    text = "\n".join(lines)
    text = re.sub(r"`([^`]*)`", r"\1", text)
    text = re.sub(r"(\*\*|__|\*|_|~~)(\S.*?\S|\S)\1", r"\2", text)
    text = re.sub(r"https?://\S+", "a link", text)
    text = re.sub(r"[ \t]+", " ", text)
    return re.sub(r" +([.,!?;:])", r"\1", text).strip()


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(])")
_ABBREVIATIONS = ("dr.", "mr.", "mrs.", "ms.", "st.", "prof.", "e.g.", "i.e.", "etc.", "vs.",
                  "no.", "fig.")


def sentences(text: str) -> list[str]:
    """``text`` cut into sentences (read aloud one by one while an answer streams); a title
    such as "Dr." does not end one."""
    out: list[str] = []
    for part in (p.strip() for p in _SENTENCE_END.split(text)):
        if not part:
            continue
        if out and out[-1].split()[-1].lower() in _ABBREVIATIONS:
            out[-1] = f"{out[-1]} {part}"
        else:
            out.append(part)
    return out
