"""``desktop-app voice``: offline speech to text and text to speech.

    desktop-app voice transcribe memo.wav [--language en] [--json]
    desktop-app voice say "Hello there." -o hello.wav [--speed 1.2]
    desktop-app chat --voice-out answer.wav "Tell me a joke"

Nothing leaves the computer: Whisper base and a Piper voice are installed with the app.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("voice", help="offline speech to text and text to speech",
                                   description=__doc__.splitlines()[0] if __doc__ else None)
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    transcribe = actions.add_parser("transcribe", help="a sound file to text")
    transcribe.add_argument("file", type=Path)
    transcribe.add_argument("--language", "-l", help="e.g. en, de (default: detected)")
    transcribe.add_argument("--json", action="store_true",
                            help="text, language, duration and timed segments as JSON")
    transcribe.set_defaults(func=_transcribe)
    say = actions.add_parser("say", help="text to a WAV file")
    say.add_argument("text", help="the text ('-' reads standard input); Markdown is fine")
    say.add_argument("--output", "-o", type=Path, required=True, help="the WAV file to write")
    say.add_argument("--speed", type=float, default=1.0, help="0.25 to 4 (default 1)")
    say.set_defaults(func=_say)


def _transcribe(args: argparse.Namespace) -> int:
    from desktop_app.core.voice import Transcriber

    result = Transcriber().transcribe(args.file, language=args.language)
    if args.json:
        print(json.dumps(result.to_dict(), ensure_ascii=False, indent=2))
    else:
        print(result.text)
    return 0


def _say(args: argparse.Namespace) -> int:
    from desktop_app.core.voice import synthesize

    text = sys.stdin.read() if args.text == "-" else args.text
    path = synthesize(text, args.output, speed=args.speed)
    print(f"Wrote {path}", file=sys.stderr)
    return 0


def run_piper(arguments: list[str]) -> int:
    """``voice _piper ARGS``: Piper's own command line, in the child process that
    ``core/voice/tts.synthesize`` starts (Piper is GPL-3.0: run, not linked)."""
    from piper.__main__ import main as piper_main

    sys.argv = ["piper", *arguments]
    piper_main()
    return 0
