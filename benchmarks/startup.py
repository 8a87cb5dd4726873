"""Start time of the frozen app (packaging/build-linux.sh) against the venv install.

Time from exec to the main window mapped on the X display (polled with xdotool every
20 ms), for each install, with the file cache warm (median of the runs) and cold (the
kernel's page cache dropped before each run: root only, else reported as skipped). Both
installs start with the same fresh user folder already set up (settings and database
created by one earlier start), so what is measured is the program's own start.

Run under a display, e.g.:
    xvfb-run -a -s "-screen 0 1280x800x24" .venv/bin/python benchmarks/startup.py
    ... benchmarks/startup.py --frozen dist/desktop-app/desktop-app --runs 5
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WINDOW_TITLE = "^desktop-app$"
TIMEOUT_S = 120.0


def _window_visible() -> bool:
    found = subprocess.run(["xdotool", "search", "--onlyvisible", "--name", WINDOW_TITLE],
                           capture_output=True, text=True, check=False)
    return bool(found.stdout.strip())


def _drop_caches() -> bool:
    """Empty the page cache so the next start reads every file from disk (root only)."""
    try:
        os.sync()
        Path("/proc/sys/vm/drop_caches").write_text("3\n")
        return True
    except OSError:
        return False


def time_to_window(command: list[str], home: Path) -> float:
    """Seconds from exec until the window is mapped; the process is then ended."""
    env = dict(os.environ, DESKTOP_APP_HOME=str(home))
    started = time.perf_counter()
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    try:
        while time.perf_counter() - started < TIMEOUT_S:
            if _window_visible():
                return time.perf_counter() - started
            if process.poll() is not None:
                raise RuntimeError(f"{command[0]} exited with {process.returncode}")
            time.sleep(0.02)
        raise RuntimeError(f"{command[0]}: no window within {TIMEOUT_S:.0f} s")
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def measure(name: str, command: list[str], runs: int) -> dict[str, object]:
    home = Path(tempfile.mkdtemp(prefix=f"startup-{name}-"))
    try:
        time_to_window(command, home)  # first start: creates settings and database
        warm = [time_to_window(command, home) for _ in range(runs)]
        cold: list[float] = []
        for _ in range(runs):
            if not _drop_caches():
                break
            cold.append(time_to_window(command, home))
    finally:
        shutil.rmtree(home, ignore_errors=True)
    return {"install": name, "warm_median_s": round(statistics.median(warm), 3),
            "warm_runs_s": [round(value, 3) for value in warm],
            "cold_median_s": round(statistics.median(cold), 3) if cold else None,
            "cold_runs_s": [round(value, 3) for value in cold]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--frozen", default=str(ROOT / "dist/desktop-app/desktop-app"))
    parser.add_argument("--venv", default=str(ROOT / ".venv/bin/desktop-app"))
    parser.add_argument("--extra", action="append", default=[], metavar="NAME=PATH",
                        help="another build to time the same way (e.g. nuitka=...)")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    if not os.environ.get("DISPLAY") or shutil.which("xdotool") is None:
        print("needs an X display and xdotool (run under xvfb-run)", file=sys.stderr)
        return 2
    installs = [("venv", args.venv), ("frozen", args.frozen)]
    installs += [tuple(item.split("=", 1)) for item in args.extra]  # type: ignore[misc]
    results = []
    for name, path in installs:
        if not Path(path).exists():
            print(f"{name}: {path} not found, skipped", file=sys.stderr)
            continue
        results.append(measure(name, [path], args.runs))
    if args.json:
        print(json.dumps(results, indent=2))
        return 0
    base = next((r for r in results if r["install"] == "venv"), None)
    print(f"{'install':<10}{'warm (s)':>10}{'cold (s)':>10}{'warm/venv':>11}{'cold/venv':>11}")
    for row in results:
        cold = row["cold_median_s"]
        warm_ratio = (f"{row['warm_median_s'] / base['warm_median_s']:.2f}" if base else "-")
        cold_ratio = (f"{cold / base['cold_median_s']:.2f}"
                      if base and cold and base["cold_median_s"] else "-")
        print(f"{row['install']:<10}{row['warm_median_s']:>10.2f}"
              f"{(f'{cold:.2f}' if cold else 'skipped'):>10}{warm_ratio:>11}{cold_ratio:>11}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
