"""Opening GGUF files with llama.cpp safely: checks first, library errors translated.

Everything here is blocking and meant for the model's worker thread (or, for the small
vocabulary-only tokenizer, any thread under its own lock). Importing this module loads the
llama.cpp shared library, so the adapter imports it lazily.
"""

from __future__ import annotations

import contextlib
import os
import re
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

# ggml's OpenMP threads meet at a barrier after every graph node. With libgomp's default
# (spin a while, then sleep) generation collapses as soon as another process wants a core:
# measured on 2 cores, 2 threads, load 2.5-4.5: default 1.4-3.6 tokens/s, PASSIVE 19-23.
# ACTIVE (spin forever) reached 30-32 at moderate load but keeps both cores busy, starving
# the UI thread of this very process and everything else on a laptop, and collapses when
# a thread is preempted. PASSIVE is the predictable choice for a desktop app; a user who
# wants ACTIVE sets it. libgomp reads it once when llama.cpp's library loads, so it is set
# before the import.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import llama_cpp
from llama_cpp import Llama, StoppingCriteriaList
from llama_cpp._internals import LlamaModel

from desktop_app.core.errors import IncompatibleBuildError, ModelFileError

GGUF_MAGIC = b"GGUF"
_REINSTALL = "Reinstall with `bash packaging/install.sh`, which builds a portable llama.cpp."

#: Called with the prompt tokens and the stopping criteria the chat handler chose; returns the
#: criteria to use. Lets the adapter see the exact prompt and stop generation per token.
RequestHook = Callable[[list[int], StoppingCriteriaList | None], StoppingCriteriaList]


class HookedLlama(Llama):
    """``Llama`` whose completions pass through a per-request hook.

    The chat handlers (GGUF Jinja template or a named ``chat_format``) format and tokenize
    the messages, then call ``create_completion`` with the token list; intercepting there
    gives the exact prompt tokens (usage, overflow check, template verification) and a place
    to add a per-token stop check, without re-implementing any chat format.
    """

    request_hook: RequestHook | None = None

    def create_completion(self, prompt: Any, **kwargs: Any) -> Any:  # type: ignore[override]
        hook = self.request_hook
        if hook is not None and isinstance(prompt, list):
            kwargs["stopping_criteria"] = hook(prompt, kwargs.get("stopping_criteria"))
        return super().create_completion(prompt, **kwargs)


def check_gguf_file(path: Path) -> None:
    """Raise ``ModelFileError`` unless ``path`` is a readable file starting with ``GGUF``."""
    where = "Check the model's path in Settings, or remove the model there."
    if not path.exists():
        raise ModelFileError(f"The model file {path} does not exist.", hint=where)
    if not path.is_file():
        raise ModelFileError(f"The model path {path} is not a file.", hint=where)
    try:
        with path.open("rb") as handle:
            magic = handle.read(4)
    except OSError as exc:
        raise ModelFileError(f"The model file {path} cannot be read: {exc.strerror or exc}.",
                             hint="Check the file's permissions.") from exc
    if magic != GGUF_MAGIC:
        raise ModelFileError(
            f"{path} is not a GGUF model file (it does not start with 'GGUF').",
            hint="llama.cpp needs a .gguf file; convert the model or download its GGUF version.")


def _cpu_flags(cpuinfo_text: str) -> set[str]:
    for line in cpuinfo_text.splitlines():
        if line.startswith("flags"):
            return set(line.partition(":")[2].split())
    return set()


def check_cpu_compatibility(system_info: str | None = None, cpuinfo_text: str | None = None) -> None:
    """Refuse a llama.cpp build with AMX kernels on a CPU that advertises AMX.

    That combination segfaults at the first decode (ggml_backend_amx_mul_mat); failing with
    an explanation beats killing the whole app. Both inputs are injectable for tests.
    """
    if system_info is None:
        system_info = llama_cpp.llama_print_system_info().decode("utf-8", "replace")
    if not re.search(r"\bAMX\w*\s*=\s*1", system_info):
        return
    if cpuinfo_text is None:
        try:
            cpuinfo_text = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
        except OSError:
            return  # not Linux: no known crash to prevent
    if any(flag.startswith("amx") for flag in _cpu_flags(cpuinfo_text)):
        raise IncompatibleBuildError(
            "The installed llama.cpp was built with AMX support, which crashes on this CPU.",
            hint=_REINSTALL)


def default_threads() -> int:
    """Threads for generation: all CPUs we may use, halved on larger (likely SMT) machines.

    llama.cpp's own default (cpu_count // 2) leaves one of two cores idle on small machines.
    """
    try:
        available = len(os.sched_getaffinity(0))
    except AttributeError:  # not on every platform
        available = os.cpu_count() or 1
    return max(1, available // 2 if available >= 6 else available)


def load_llama(path: Path, *, context_size: int, n_threads: int | None,
               chat_format: str | None, verbose: bool, gpu_layers: int = 0) -> HookedLlama:
    """Load the model (blocking); all failures become ``ModelFileError``/``IncompatibleBuildError``."""
    check_gguf_file(path)
    check_cpu_compatibility()
    threads = n_threads or default_threads()
    try:
        return HookedLlama(model_path=str(path), n_ctx=context_size, n_threads=threads,
                           n_threads_batch=threads, chat_format=chat_format, verbose=verbose,
                           n_gpu_layers=gpu_layers)
    except ValueError as exc:
        raise ModelFileError(
            f"llama.cpp could not load {path}: the file is corrupt, truncated, or a model "
            f"architecture this llama.cpp does not support ({exc}).",
            hint="Re-download or re-convert the model; for the bundled model delete it and "
                 "start again so it is re-assembled.") from exc


class VocabTokenizer:
    """The model's tokenizer alone (vocab-only load, a few MB), usable from any thread.

    ``count_tokens`` is synchronous and must not wait behind a running generation on the
    worker thread, and the generation context must only be touched by the worker, so token
    counting gets its own vocabulary-only llama model.
    """

    def __init__(self, path: Path) -> None:
        self._path = path
        self._model: LlamaModel | None = None
        self._lock = threading.Lock()

    def _ensure(self) -> LlamaModel:
        if self._model is None:
            check_gguf_file(self._path)
            params = llama_cpp.llama_model_default_params()
            params.vocab_only = True
            try:
                self._model = LlamaModel(path_model=str(self._path), params=params, verbose=False)
            except ValueError as exc:
                raise ModelFileError(f"llama.cpp could not read the vocabulary of {self._path}.",
                                     hint="The file is corrupt or truncated; replace it.") from exc
        return self._model

    def tokenize(self, text: str, *, special: bool = False) -> list[int]:
        with self._lock:
            return list(self._ensure().tokenize(text.encode("utf-8"), add_bos=False,
                                                special=special))

    def metadata(self) -> dict[str, str]:
        """The GGUF's key/value metadata (chat template, architecture...), no weights read."""
        with self._lock:
            return dict(self._ensure().metadata())

    def detokenize(self, tokens: list[int]) -> str:
        with self._lock:
            return self._ensure().detokenize(tokens, special=True).decode("utf-8", "replace")

    def close(self) -> None:
        with self._lock:
            if self._model is not None:
                with contextlib.suppress(Exception):
                    self._model.close()  # type: ignore[no-untyped-call]
                self._model = None
