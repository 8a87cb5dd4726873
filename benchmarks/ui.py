"""Benchmark the desktop window against its targets.

1. cold start to window shown (fresh process, real settings/store/registry, no model load):
   target ≤ 1 s;
2. idle memory with the window shown, before any artifact is opened: target ≤ 150 MB RSS
   (the process plus any child processes);
3. event-loop stall while streaming 2,000 tokens from the real local model into the chat:
   a QTimer ticks every 10 ms; a stall is how late a tick comes. Target p99 ≤ 50 ms;
4. keystroke-to-paint in the message box while the model streams on every core, with the
   model's threads niced (the default) and not niced: target p99 ≤ 50 ms;
5. per-token render cost at the start vs the end of a 20,000-token answer (synthetic
   Markdown with paragraphs, lists, tables and code, rendered at a forced frame every 8
   tokens with layout and paint): target ratio ≤ 2.

    python benchmarks/ui.py                  # everything (the model part takes ~2 min)
    python benchmarks/ui.py --skip-model     # no real model
    python benchmarks/ui.py --tokens 500     # a shorter real-model stream
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

START_TARGET_S = 1.0
RSS_TARGET_MB = 150.0
STALL_P99_TARGET_MS = 50.0
KEYSTROKE_P99_TARGET_MS = 50.0
RENDER_RATIO_TARGET = 2.0

_CHILD = r"""
import os, sys, time, asyncio
from desktop_app.ui.app import create_application, open_window
from desktop_app.ui.event_loop import make_event_loop
app = create_application([sys.argv[0]])
loop = make_event_loop(app)
asyncio.set_event_loop(loop)
async def main():
    window = await open_window(app)
    app.processEvents()
    t = os.times()
    print("SHOWN", time.time(), flush=True)
    print("CPU", t.user + t.system, flush=True)
    await asyncio.sleep(1.0)  # idle
    rss = 0
    pids = [os.getpid()] + [int(p) for p in os.listdir("/proc") if p.isdigit()
                            and _ppid(int(p)) == os.getpid()]
    for pid in pids:
        rss += _rss_kb(pid)
    print("RSS_KB", rss, len(pids), flush=True)
    window.close()
    await window.controller.wait_idle()
    await window.ctx.aclose()
def _ppid(pid):
    try:
        return int(open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[1])
    except OSError:
        return -1
def _rss_kb(pid):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0
loop.run_until_complete(main())
loop.close()
"""


def bench_cold_start(runs: int = 3) -> dict[str, float]:
    """Fresh process → window shown (wall time seen by the parent), and idle RSS."""
    times, cpu, rss = [], [], []
    # As installed for a user: bytecode is cached (a PYTHONDONTWRITEBYTECODE environment
    # compiled ~90 modules on every start, +0.17 s), and one start before measuring
    # writes the cache.
    base_env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    for index in range(runs + 1):
        env = dict(base_env, DESKTOP_APP_HOME=_scratch_home(),
                   QT_QPA_PLATFORM=os.environ.get("QT_QPA_PLATFORM", "offscreen"))
        started = time.time()
        proc = subprocess.run([sys.executable, "-c", _CHILD], cwd=ROOT, env=env,
                              capture_output=True, text=True, timeout=120, check=False)
        lines = dict(line.split(" ", 1) for line in proc.stdout.splitlines() if " " in line)
        if "SHOWN" not in lines:
            raise SystemExit(f"the app did not start:\n{proc.stderr[-3000:]}")
        if index == 0:
            continue  # the warm-up start that wrote the bytecode cache
        times.append(float(lines["SHOWN"]) - started)
        cpu.append(float(lines["CPU"]))
        rss.append(int(lines["RSS_KB"].split()[0]) / 1024)
    return {"cold_start_s_median": statistics.median(times), "cold_start_s_min": min(times),
            # CPU seconds the process used until the window was shown: what the wall time
            # would be on an idle machine (the shared CI/dev machines are heavily loaded).
            "cold_start_cpu_s_median": statistics.median(cpu),
            "idle_rss_mb_median": statistics.median(rss),
            "load_average_1min": os.getloadavg()[0]}


def synthetic_answer(tokens: int) -> list[str]:
    """A long Markdown answer split into ~4-character tokens, like a model streams it."""
    blocks = [
        ("## Section {n}\n\nThe quick analysis of item {n} shows a steady trend; the numbers "
         "below summarise what changed and why it matters for the next step.\n\n"),
        "- first point about {n}\n- second point, with `inline code`\n- third point\n\n",
        "```python\ndef step_{n}(values):\n    total = sum(values)\n    return total / len(values)\n```\n\n",
        "| metric | value |\n|---|---|\n| items | {n} |\n| ratio | 0.{n} |\n\n",
        ("A longer paragraph follows, explaining the details of the computation in plain "
         "words so that a reader can check every step without running the code themselves. "
         "It goes on for a while, as real answers do, with **bold** and *italic* text.\n\n"),
    ]
    text, n = "", 0
    while len(text) < tokens * 4:
        text += blocks[n % len(blocks)].format(n=n)
        n += 1
    return [text[i:i + 4] for i in range(0, tokens * 4, 4)]


async def bench_render_cost(window, tokens: int = 20_000, frame_every: int = 8,
                            window_tokens: int = 1000) -> dict[str, float]:
    """Per-token cost (append + forced frame with layout/paint) early vs late in an answer."""
    from PySide6.QtCore import QEvent
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance()
    turn = window.chat.add_assistant()
    turn.begin_answer()
    pieces = synthetic_answer(tokens)
    per_token: list[float] = []
    for i, piece in enumerate(pieces):
        t0 = time.perf_counter()
        turn.append_answer(piece)
        if i % frame_every == frame_every - 1:
            turn.answer.flush()
            # Layout and a synchronous paint, without processEvents(): under qasync that
            # ran other tasks' steps inside this one ("Cannot enter into task ...").
            app.sendPostedEvents(None, QEvent.Type.LayoutRequest.value)
            window.repaint()
        per_token.append(time.perf_counter() - t0)
        if i % 500 == 0:
            await asyncio.sleep(0)
    turn.end_answer()
    start = statistics.mean(per_token[:window_tokens]) * 1e6
    end = statistics.mean(per_token[-window_tokens:]) * 1e6
    return {"render_us_per_token_start": start, "render_us_per_token_end": end,
            "render_ratio_end_vs_start": end / start,
            "answer_widgets": len(turn.answer.segment_widgets())}


async def bench_stall(window, tokens: int) -> dict[str, float]:
    """Stream ``tokens`` from the real bundled model into the chat; measure timer lateness."""
    from PySide6.QtCore import QTimer

    from desktop_app.core.llm.types import ChatMessage

    name = window.ctx.registry.default_name
    llm = await window.controller.ensure_llm(name)
    turn = window.chat.add_assistant()
    turn.begin_answer()
    ticks: list[float] = []
    timer = QTimer()
    timer.setInterval(10)
    timer.timeout.connect(lambda: ticks.append(time.perf_counter()))
    prompts = ["Write a long, detailed tutorial on Python generators with many examples.",
               "Explain, in depth and with code, how hash maps work internally.",
               "Write a long essay about the history of computing, section by section."]
    produced, started = 0, time.perf_counter()
    timer.start()
    while produced < tokens:
        prompt = prompts[produced % len(prompts)]
        async for chunk in llm.stream_chat([ChatMessage.user(prompt)],
                                           max_tokens=min(1000, tokens - produced)):
            if chunk.content:
                produced += 1
                turn.append_answer(chunk.content)
            if produced >= tokens:
                break
    timer.stop()
    elapsed = time.perf_counter() - started
    turn.end_answer()
    gaps = sorted((b - a) * 1000 for a, b in itertools.pairwise(ticks))
    p99 = gaps[int(0.99 * (len(gaps) - 1))]
    return {"stream_tokens": produced, "stream_tok_per_s": produced / elapsed,
            "tick_interval_ms_p50": statistics.median(gaps), "tick_interval_ms_p99": p99,
            "tick_interval_ms_max": gaps[-1], "stall_ms_p99": max(0.0, p99 - 10.0)}


async def bench_typing(window, tokens: int) -> dict[str, float]:
    """Keystroke-to-paint in the message box while the real model streams on every core,
    with the model's threads niced (the app's default) and not niced, in the same run."""
    from PySide6.QtCore import QEvent, QObject, Qt, QTimer
    from PySide6.QtGui import QKeyEvent
    from PySide6.QtWidgets import QApplication

    from desktop_app.core.llm import llama_worker
    from desktop_app.core.llm.bundled import ensure_bundled_model
    from desktop_app.core.llm.llama_cpp_adapter import LlamaCppLLM
    from desktop_app.core.llm.types import ChatMessage

    box = window.composer.input
    pending: list[float] = []
    latencies: list[float] = []

    class PaintWatch(QObject):
        def eventFilter(self, obj, event):
            if event.type() == QEvent.Type.Paint and pending:
                latencies.append((time.perf_counter() - pending.pop(0)) * 1000)
                pending.clear()
            return False

    watch = PaintWatch()
    box.viewport().installEventFilter(watch)

    def press() -> None:
        pending.append(time.perf_counter())
        for kind in (QEvent.Type.KeyPress, QEvent.Type.KeyRelease):
            QApplication.postEvent(box, QKeyEvent(kind, Qt.Key.Key_A,
                                                  Qt.KeyboardModifier.NoModifier, "a"))

    results: dict[str, float] = {}
    path = ensure_bundled_model()
    for label, niceness in (("not_niced", 0), ("niced", llama_worker.WORKER_NICENESS)):
        saved, llama_worker.WORKER_NICENESS = llama_worker.WORKER_NICENESS, niceness
        llm = LlamaCppLLM(path, context_size=2048)  # a fresh worker thread at this niceness
        try:
            await llm.load()
            latencies.clear()
            box.clear()
            box.setFocus()
            keys = QTimer()
            keys.setInterval(120)
            keys.timeout.connect(press)
            keys.start()
            produced = 0
            async for chunk in llm.stream_chat(
                    [ChatMessage.user("Write a long, detailed tutorial on Python generators.")],
                    max_tokens=tokens):
                produced += bool(chunk.content)
            keys.stop()
            await asyncio.sleep(0.3)
        finally:
            llama_worker.WORKER_NICENESS = saved
            await llm.aclose()
        ordered = sorted(latencies)
        results[f"keystroke_ms_p50_{label}"] = statistics.median(ordered)
        results[f"keystroke_ms_p99_{label}"] = ordered[int(0.99 * (len(ordered) - 1))]
        results[f"keystrokes_{label}"] = len(ordered)
    results["keystroke_p99_ratio_niced_vs_not"] = (results["keystroke_ms_p99_niced"]
                                                   / results["keystroke_ms_p99_not_niced"])
    box.viewport().removeEventFilter(watch)
    box.clear()
    return results


async def _in_process(args: argparse.Namespace) -> dict[str, float]:
    from desktop_app.ui.app import create_application, open_window

    app = create_application([sys.argv[0]])
    window = await open_window(app)
    window.resize(1200, 800)
    results = await bench_render_cost(window)
    if not args.skip_model:
        window.new_conversation()
        results.update(await bench_stall(window, args.tokens))
        results.update(await bench_typing(window, min(args.tokens, 400)))
    window.close()
    await window.controller.wait_idle()
    await window.ctx.aclose()
    return results


_HOMES: list[str] = []


def _scratch_home() -> str:
    """A fresh app home for one measurement, removed when the benchmark ends (five were
    left behind, one holding a 487 MB copy of the bundled model)."""
    home = tempfile.mkdtemp(prefix="ui-bench-")
    _HOMES.append(home)
    return home


def main(argv: list[str] | None = None) -> int:
    try:
        return _main(argv)
    finally:
        import shutil

        for home in _HOMES:
            shutil.rmtree(home, ignore_errors=True)


def _main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--skip-model", action="store_true", help="skip the real-model stream")
    parser.add_argument("--tokens", type=int, default=2000, help="tokens to stream (default 2000)")
    args = parser.parse_args(argv)
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    results = bench_cold_start()

    # The model as installed, not assembled again into the scratch home.
    from desktop_app.core.llm.bundled import MODEL_ENV, ensure_bundled_model

    if not args.skip_model:
        os.environ.setdefault(MODEL_ENV, str(ensure_bundled_model()))
    os.environ["DESKTOP_APP_HOME"] = _scratch_home()
    from desktop_app.ui.app import create_application
    from desktop_app.ui.event_loop import make_event_loop

    loop = make_event_loop(create_application([sys.argv[0]]))
    asyncio.set_event_loop(loop)
    try:
        results.update(loop.run_until_complete(_in_process(args)))
    finally:
        loop.close()

    checks = {
        "cold_start": results["cold_start_s_median"] <= START_TARGET_S,
        "idle_rss": results["idle_rss_mb_median"] <= RSS_TARGET_MB,
        "render_ratio": results["render_ratio_end_vs_start"] <= RENDER_RATIO_TARGET,
    }
    if "stall_ms_p99" in results:
        checks["stall_p99"] = results["stall_ms_p99"] <= STALL_P99_TARGET_MS
    if "keystroke_ms_p99_niced" in results:
        checks["keystroke_p99"] = results["keystroke_ms_p99_niced"] <= KEYSTROKE_P99_TARGET_MS
    print(json.dumps({"results": {k: round(v, 3) if isinstance(v, float) else v
                                  for k, v in results.items()},
                      "targets_met": checks}, indent=2))
    return 0 if all(checks.values()) else 1


if __name__ == "__main__":
    raise SystemExit(main())
