"""The benchmark script runs end to end (at a small size, so it cannot rot unnoticed)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "store.py"


def test_benchmark_builds_measures_and_compares(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    spec = importlib.util.spec_from_file_location("bench_store", SCRIPT)
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "bench_store", bench)  # dataclasses look it up
    spec.loader.exec_module(bench)
    bench.TOTAL_MESSAGES, bench.BIG_CONVERSATION, bench.MESSAGES_PER_OTHER = 1500, 500, 100
    code = bench.main(["--db", str(tmp_path / "b.db")])
    out = capsys.readouterr().out
    assert "1,500 messages" in out and "big conversation: 500 messages" in out
    assert out.count("raw sqlite3") >= 8 and "ratio" in out
    assert code == (0 if "all targets met" in out else 1)
