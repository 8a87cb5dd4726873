"""A regression guard for the engine's own cost per iteration (see benchmarks/engine_overhead.py).

The target is 1 ms per iteration. The test bounds process CPU time (not wall time), which a
loaded CI machine barely inflates: measured 0.2-0.4 ms here, while the regression this guards
against (re-checking a tool's JSON schema on every call) cost 1.5 ms CPU per iteration.
"""

from __future__ import annotations

import importlib.util
import statistics
from pathlib import Path

import pytest

pytestmark = pytest.mark.anyio

BENCHMARK = Path(__file__).resolve().parents[2] / "benchmarks" / "engine_overhead.py"


def load_benchmark():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("engine_overhead", BENCHMARK)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("native", [False, True])
async def test_engine_overhead_per_iteration_stays_small(native: bool) -> None:
    bench = load_benchmark()
    await bench.one_run(native)  # warm-up
    cpu = [(await bench.one_run(native))[1] for _ in range(3)]
    assert statistics.median(cpu) < 0.001, f"{statistics.median(cpu) * 1000:.2f} ms/iteration"
