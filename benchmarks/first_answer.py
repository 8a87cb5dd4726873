"""The first answer after a fresh install, in the real window: is it slowed by building the
bundled model's prompt state?

A fresh user folder (nothing assembled, no prompt state), the window opened the way
``desktop-app`` opens it (``open_window`` + ``prepare_default_model``: the model is
assembled and a low-priority child builds the prompt state while the window sits idle).
Then, as a person would:

* ``idle``: wait until the window is idle (the child done), ask a question, and time
  Send → the first word shown in the chat; then ask a second question the same way (the
  state is warm: the baseline in the same run);
* ``at once`` (``--at-once``): ask the first question as soon as the model is assembled,
  while the child still works (the answer waits for it instead of doing the work twice);
* ``documents`` (``--documents``): once idle, add a collection of three notes, attach it
  to the chat, give the person ``--typing`` seconds to type, and ask two questions about
  it (the chat's own system turn, with the search tool, is prepared on attaching).

Reports seconds and the ratio first/second; the footer's own "first word" (counted from
Send) is shown beside the polled time as a check of the footer.

    xvfb-run -a .venv/bin/python benchmarks/first_answer.py [--at-once | --documents]
                                                        [--typing S] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

QUESTIONS = ("What is the capital of France?", "Explain a Python generator in two sentences.")
DOCUMENT_QUESTIONS = ("What's the guest wifi password?", "When does the blue bin go out?")
NOTES = {
    "wifi.md": "# Home network\n\n- Main network: HomeNet, password blue-river-42\n"
               "- Guest network: HomeGuest, password sunny-day-7\n\n"
               "The router is in the hallway cupboard.\n",
    "bins.md": "# Bins\n\nThe blue bin (paper) goes out on Tuesdays, the green bin (garden) "
               "every other Friday.\n",
    "boiler.txt": "Boiler service: call Smith Heating, 0123 456789. Last service: March 2026.\n",
}
FOOTER_FIRST_WORD = re.compile(r"first word ([\d.]+) s")


async def _ask(window: Any, question: str) -> dict[str, Any]:
    """Send ``question``; seconds from Send to the first word shown, and the footer's."""
    count = len(window.chat.items())
    sent = time.perf_counter()
    await window.send(question)
    first: float | None = None
    while True:
        turns = window.chat.items()
        turn = turns[-1] if len(turns) > count else None
        if first is None and turn is not None and turn.answer_text().strip():
            first = time.perf_counter() - sent
        if window.controller.active is None and turn is not None and first is not None:
            break
        if time.perf_counter() - sent > 600:
            raise TimeoutError(f"no answer to {question!r} within 600 s")
        await asyncio.sleep(0.02)
    await window.controller.wait_idle()
    footer = " ".join(turn.footer.text().replace("\u00a0", " ").replace("\u2060", "").split())
    match = FOOTER_FIRST_WORD.search(footer)
    return {"first_word_s": first, "footer_first_word_s": float(match.group(1)) if match
            else None, "total_s": time.perf_counter() - sent, "answer": turn.answer_text()}


async def _scenario(app: Any, at_once: bool, documents: bool = False,
                    typing: float = 0.0) -> dict[str, Any]:
    from desktop_app.ui.app import open_window, prepare_default_model

    window = await open_window(app)
    started = time.perf_counter()
    prepare_default_model(window)
    from desktop_app.core.llm import bundled

    while not bundled.is_bundled_model_ready() or window.ctx.preparing is None:
        await asyncio.sleep(0.1)
    assembled = time.perf_counter() - started
    prepared: float | None = None
    if not at_once:
        await window.ctx.preparing
        prepared = time.perf_counter() - started
    questions = QUESTIONS
    if documents:
        await window.controller.ensure_llm(window.ctx.registry.default_name)
        folder = Path(os.environ["DESKTOP_APP_HOME"]) / "notes-folder"
        folder.mkdir()
        for name, text in NOTES.items():
            (folder / name).write_text(text, encoding="utf-8")
        library = window.ctx.documents()
        await asyncio.to_thread(library.add_paths, "Home", [folder])
        await library.sync_async("Home")
        window.documents.set_attached("Home", True)
        await asyncio.sleep(typing)
        questions = DOCUMENT_QUESTIONS
    first = await _ask(window, questions[0])
    second = await _ask(window, questions[1])
    window.close()
    await window.ctx.registry.aclose()
    scenario = "documents" if documents else "at once" if at_once else "idle"
    return {"scenario": scenario, "assembled_s": assembled, "prompt_state_built_s": prepared,
            "first": first, "second": second}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--at-once", action="store_true",
                        help="ask while the prompt state is still being built")
    parser.add_argument("--documents", action="store_true",
                        help="questions in a chat with a collection attached")
    parser.add_argument("--typing", type=float, default=10.0, metavar="S",
                        help="seconds between attaching and Send (--documents; default 10)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="first-answer-") as home:
        os.environ["DESKTOP_APP_HOME"] = home
        import qasync

        from desktop_app.ui.app import create_application

        app = create_application([])
        loop = qasync.QEventLoop(app)
        asyncio.set_event_loop(loop)
        with loop:
            result = loop.run_until_complete(_scenario(app, args.at_once, args.documents,
                                                          args.typing))
    if args.json:
        print(json.dumps(result, indent=1))
        return 0
    first, second = result["first"], result["second"]
    print(f"scenario: {result['scenario']} (fresh user folder, bundled model)")
    print(f"model assembled after {result['assembled_s']:.1f} s")
    if result["prompt_state_built_s"] is not None:
        print(f"prompt state built (child, idle window) after "
              f"{result['prompt_state_built_s']:.1f} s")
    for name, run in (("first question", first), ("second question", second)):
        print(f"{name}: first word {run['first_word_s']:.2f} s after Send "
              f"(footer: {run['footer_first_word_s']} s), answer done {run['total_s']:.1f} s")
        print(f"  answer: {' '.join(run['answer'].split())[:300]}")
    if first["first_word_s"] and second["first_word_s"]:
        print(f"ratio first/second (first word): "
              f"{first['first_word_s'] / second['first_word_s']:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
