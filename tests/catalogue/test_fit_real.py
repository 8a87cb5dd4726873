"""The memory estimate against the real resident memory of the bundled model.

Each measurement is a fresh process (resident memory of a process that loaded a model
before is not a clean reading): it loads the GGUF through llama.cpp at a context size,
evaluates a prompt, and reports how much resident memory loading and evaluating added.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from desktop_app.core.catalogue.fit import estimate_memory
from desktop_app.core.catalogue.gguf_meta import read_gguf

pytestmark = pytest.mark.real_model

_MEASURE = r"""
import json, sys
def rss():
    with open("/proc/self/status") as f:
        return next(int(l.split()[1]) * 1024 for l in f if l.startswith("VmRSS"))
import llama_cpp
path, n_ctx, n_prompt = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
before = rss()
llm = llama_cpp.Llama(path, n_ctx=n_ctx, n_threads=2, verbose=False)
loaded = rss()
tokens = llm.tokenize(("The quick brown fox jumps over the lazy dog. " * 600).encode())
llm.eval(tokens[:n_prompt])
print(json.dumps({"loaded": loaded - before, "used": rss() - before}))
"""


def _measure(model: Path, context_size: int, prompt_tokens: int) -> dict[str, int]:
    out = subprocess.run([sys.executable, "-c", _MEASURE, str(model), str(context_size),
                          str(prompt_tokens)], capture_output=True, text=True, timeout=600,
                         check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize(("context_size", "prompt_tokens"), [(2048, 1900), (8192, 600)])
def test_estimate_is_within_15_percent_of_resident_memory(
        bundled_model_path: Path, context_size: int, prompt_tokens: int) -> None:
    info = read_gguf(bundled_model_path)
    measured = _measure(bundled_model_path, context_size, prompt_tokens)
    at_load = estimate_memory(info, context_size).at_load
    in_use = estimate_memory(info, context_size, tokens_in_use=prompt_tokens).total
    assert abs(at_load - measured["loaded"]) <= 0.15 * measured["loaded"], (at_load, measured)
    assert abs(in_use - measured["used"]) <= 0.15 * measured["used"], (in_use, measured)
    # A larger context must cost more: the estimate follows what llama.cpp allocates.
    assert estimate_memory(info, context_size * 2).at_load > at_load
