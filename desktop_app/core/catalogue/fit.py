"""Will a model fit in this machine's memory? Estimated from its GGUF header, then judged
against the memory that is free now.

The parts are the ones llama.cpp itself allocates (its load log names them):

* weights: the tensor data, memory-mapped from the file, plus the copies llama.cpp makes
  of some tensors in a faster layout ("CPU_REPACK": 28 MiB of the bundled model's 463);
* KV cache: keys and values of every layer for every token of the context, in f16;
* compute scratch: the attention scores of one batch against the tokens held so far,
  which grows as a conversation fills the context;
* the runtime: vocabulary tables and buffers, by vocabulary size.

Measured for the bundled model (resident memory added by loading it, then after a long
prompt; tests/catalogue/test_fit_real.py checks the estimate stays within 15 %):
n_ctx 2048: 567 MiB after loading, 642 MiB after a 1,900-token prompt; n_ctx 8192:
639 MiB after loading, 762 MiB after 3,000 tokens.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Literal

from desktop_app.core.catalogue.gguf_meta import GgufInfo

MiB = 1024 * 1024
#: llama.cpp's default micro-batch (tokens evaluated together).
N_UBATCH = 512
#: f16 keys and values.
KV_BYTES = 2
#: Share of the weights llama.cpp copies into a faster layout on CPUs (measured 6 %).
REPACK_SHARE = 0.06
#: Runtime tables per vocabulary entry, and a fixed part (measured, see module docstring).
BYTES_PER_VOCAB_ENTRY = 256
RUNTIME_FIXED = 16 * MiB
#: The attention scratch touched is ~1.5x the scores matrix itself (measured).
SCRATCH_FACTOR = 1.5
#: Leave this share of free memory for the system and the app's window.
TIGHT_SHARE = 0.8

Verdict = Literal["fits", "tight", "does not fit"]


@dataclass(frozen=True)
class MemoryEstimate:
    """Bytes a model needs with a context of ``context_size`` tokens."""

    context_size: int
    weights: int
    kv_cache: int
    runtime: int
    scratch: int

    @property
    def at_load(self) -> int:
        """Resident right after loading (an empty conversation)."""
        return self.weights + self.kv_cache + self.runtime

    @property
    def total(self) -> int:
        """Resident once the conversation has filled the context."""
        return self.at_load + self.scratch


@dataclass(frozen=True)
class Shape:
    """The numbers the estimate needs, from a GGUF header or a catalogue entry."""

    weights: int
    layers: int
    heads: int
    kv_heads: int
    key_length: int
    value_length: int
    vocabulary: int

    @classmethod
    def of(cls, info: GgufInfo) -> Shape:
        weights = info.tensor_bytes
        if info.split_parts:
            weights = max(info.total_size - (info.file_size - info.tensor_bytes), weights)
        return cls(weights, info.layers, info.heads, info.kv_heads, info.key_length,
                   info.value_length, info.vocabulary_size)


def kv_cache_bytes(model: GgufInfo | Shape, context_size: int) -> int:
    """Keys and values of every layer for ``context_size`` tokens."""
    shape = model if isinstance(model, Shape) else Shape.of(model)
    per_token = (shape.layers * shape.kv_heads * (shape.key_length + shape.value_length)
                 * KV_BYTES)
    return per_token * context_size


def estimate_memory(model: GgufInfo | Shape, context_size: int, *,
                    tokens_in_use: int | None = None) -> MemoryEstimate:
    """The memory ``model`` needs at ``context_size``; ``tokens_in_use`` (default: the
    whole context) is how much of the context a conversation has filled."""
    shape = model if isinstance(model, Shape) else Shape.of(model)
    used = context_size if tokens_in_use is None else min(tokens_in_use, context_size)
    scores = min(N_UBATCH, used) * used * max(shape.heads, 1) * 4  # f32 attention scores
    return MemoryEstimate(
        context_size=context_size,
        weights=int(shape.weights * (1 + REPACK_SHARE)),
        kv_cache=kv_cache_bytes(shape, context_size),
        runtime=shape.vocabulary * BYTES_PER_VOCAB_ENTRY + RUNTIME_FIXED,
        scratch=int(scores * SCRATCH_FACTOR))


def available_memory() -> int | None:
    """Memory free for a new program now (Linux's MemAvailable), or None if unknown."""
    try:
        with open("/proc/meminfo", encoding="ascii") as handle:
            for line in handle:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


@dataclass(frozen=True)
class Fit:
    verdict: Verdict
    needed: int
    available: int | None
    explanation: str


def judge_fit(estimate: MemoryEstimate, available: int | None) -> Fit:
    """"fits" with room to spare, "tight" when it would use most of what is free, else
    "does not fit" — with the numbers behind it."""
    needed = estimate.total
    parts = (f"weights {_mib(estimate.weights)} + context {estimate.context_size:,} tokens "
             f"{_mib(estimate.kv_cache + estimate.scratch)} + runtime {_mib(estimate.runtime)}"
             f" = {_mib(needed)}")
    if available is None:
        return Fit("tight", needed, None, f"needs {parts}; free memory is unknown here")
    if needed <= available * TIGHT_SHARE:
        verdict: Verdict = "fits"
    elif needed <= available:
        verdict = "tight"
    else:
        verdict = "does not fit"
    return Fit(verdict, needed, available, f"needs {parts}; {_mib(available)} free now")


def free_vram() -> int | None:
    """Free memory of the first NVIDIA GPU (``nvidia-smi``), None without one.

    Only asked when llama.cpp was built with GPU offload; untested on these CPU-only
    machines beyond "no nvidia-smi: None"."""
    import shutil
    import subprocess

    tool = shutil.which("nvidia-smi")
    if tool is None:
        return None
    try:
        out = subprocess.run([tool, "--query-gpu=memory.free", "--format=csv,noheader,nounits"],
                             capture_output=True, text=True, timeout=5, check=True).stdout
        return int(out.strip().splitlines()[0]) * 1024 * 1024
    except (OSError, subprocess.SubprocessError, ValueError, IndexError):
        return None


def gpu_offload_supported() -> bool:
    """This llama.cpp build can put layers on a GPU."""
    try:
        import llama_cpp

        return bool(llama_cpp.llama_supports_gpu_offload())
    except Exception:  # noqa: BLE001 - an old build without the function: CPU only
        return False


def gpu_layers_for(info: GgufInfo, context_size: int, free_vram: int | None) -> int:
    """How many layers to offload to a GPU with ``free_vram`` bytes free (0 without one):
    as many whole layers, with their share of the KV cache, as fit in 90 % of it."""
    if not free_vram or info.layers <= 0:
        return 0
    estimate = estimate_memory(info, context_size)
    per_layer = (estimate.weights + estimate.kv_cache) / info.layers
    budget = free_vram * 0.9 - estimate.scratch - estimate.runtime
    return max(0, min(info.layers, int(budget // per_layer))) if per_layer else 0


def size_text(value: int) -> str:
    """A file or memory size as people read it: GiB from a tenth of one, else MiB."""
    gib = 1024**3
    return f"{value / gib:.2f} GiB" if value >= gib / 10 else f"{value / MiB:.0f} MiB"


def _mib(value: int) -> str:
    return f"{value / MiB:,.0f} MiB"
