"""The life of a local model on its worker thread: loading (with the chat-template probe
for files from outside), running work on the one loaded copy, the tokenizer, and freeing
it. A mixin of ``LlamaCppLLM`` (``llama_cpp_adapter``), which holds the state it uses."""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from desktop_app.core.errors import DesktopAppError, LLMError
from desktop_app.core.llm.base import ToolSpec
from desktop_app.core.llm.llama_generation import PromptRun
from desktop_app.core.llm.llama_worker import ModelWorker
from desktop_app.core.llm.types import ChatMessage

if TYPE_CHECKING:
    from desktop_app.core.llm.llama_loading import HookedLlama, VocabTokenizer
    from desktop_app.core.llm.prompt_cache import PrefixStateCache
    from desktop_app.core.llm.tool_format import ToolStyle

T = TypeVar("T")


class LlamaLifecycle:
    """Loading, the worker, tokens and shutdown of one local model."""

    _path: Path
    _name: str
    _context_size: int
    _n_threads: int | None
    _chat_format: str | None
    _verbose: bool
    _gpu_layers: int
    _prompt_cache_dir: Path | None
    _prefix_cache: PrefixStateCache | None
    _worker: ModelWorker
    _llama: HookedLlama | None
    _tokenizer: VocabTokenizer | None
    _tokenizer_lock: threading.Lock
    _active: set[threading.Event]
    _last_prompt: list[int]
    load_thread_id: int
    load_seconds: float

    @property
    def tool_style(self) -> ToolStyle | None:
        raise NotImplementedError

    def _request(self, messages: Sequence[ChatMessage], tools: list[ToolSpec] | None,
                 *args: Any) -> dict[str, Any]:
        raise NotImplementedError

    def _prefix_tokens(self, llama: HookedLlama, request: dict[str, Any]) -> list[int] | None:
        raise NotImplementedError

    # --- loading -------------------------------------------------------------------------
    async def load(self, progress: Callable[[float], None] | None = None) -> None:
        """Load the model now (on the worker) so the first answer does not wait for it.

        ``progress`` receives 0.0 before and 1.0 after loading (llama.cpp reports no finer
        steps through its Python API). Raises ``ModelFileError``/``IncompatibleBuildError``.
        """
        if progress is not None:
            progress(0.0)
        await self._run_on_worker(self._ensure_loaded)
        if progress is not None:
            progress(1.0)

    def _ensure_loaded(self) -> HookedLlama:
        if self._llama is None:
            from desktop_app.core.llm.llama_loading import load_llama

            if self._chat_format is None and not self._trusted_file():
                self._check_template()

            started = time.perf_counter()
            llama = load_llama(self._path, context_size=self._context_size,
                               n_threads=self._n_threads, chat_format=self._chat_format,
                               verbose=self._verbose, gpu_layers=self._gpu_layers)
            self.load_seconds = time.perf_counter() - started
            if self.tool_style is not None and "tokenizer.chat_template" in llama.metadata:
                # llama-cpp-python may "guess" a named format (e.g. "llama-3") that ignores
                # tools; the GGUF's own template is the one that knows them.
                llama.chat_format = "chat_template.default"
            self._llama = llama
            self.load_thread_id = threading.get_ident()
            if self._prompt_cache_dir is not None:
                from desktop_app.core.llm.prompt_cache import PrefixStateCache

                self._prefix_cache = PrefixStateCache(self._prompt_cache_dir, self._path,
                                                      self._context_size)
            # Ready the tokenizer here too, so count_tokens() never loads it on the loop.
            self._vocab().tokenize("")
        return self._llama

    def _trusted_file(self) -> bool:
        """The bundled model: its file is checked by SHA-256 when it is assembled."""
        from desktop_app.core.llm.bundled import bundled_model_path

        try:
            return Path(self._path).resolve() == bundled_model_path().resolve()
        except (OSError, RuntimeError, DesktopAppError):
            return False

    def _check_template(self) -> None:
        from desktop_app.core.catalogue.gguf_meta import GgufError, read_gguf
        from desktop_app.core.llm.template_probe import check_template

        try:
            template = read_gguf(self._path).chat_template
        except (GgufError, OSError):
            return  # llama.cpp's own loading reports what is wrong with the file
        check_template(template, Path(self._path))

    async def _run_on_worker(self, fn: Callable[[], Any]) -> Any:
        try:
            future = self._worker.submit(fn)
        except RuntimeError as exc:
            raise LLMError(f"The local model '{self._name}' has been closed.",
                           hint="Open it again from the model list.") from exc
        return await asyncio.wrap_future(future)

    async def with_model(self, fn: Callable[[Any], T]) -> T:
        """Run ``fn(llama)`` on this model's worker, loading it first if needed: after the
        answer being written (one thing at a time), on the one loaded copy. ``fn`` leaves
        the context as it found it or empty (the next answer then evaluates again)."""
        def run() -> T:
            llama = self._ensure_loaded()
            try:
                return fn(llama)
            finally:
                self._last_prompt = []
        result: T = await self._run_on_worker(run)
        return result

    async def wait_idle(self) -> None:
        """Wait until everything queued on the worker (including a cancelled stream) ended."""
        await self._run_on_worker(lambda: None)

    async def warm_up(self, messages: Sequence[ChatMessage],
                      tools: list[ToolSpec] | None = None) -> None:
        """Evaluate (or restore from disk) the system turn of ``messages`` now, so the
        first question only pays for its own tokens. A no-op without a system message."""
        request = self._request(messages, tools, None, None, None, 1)
        await self._run_on_worker(lambda: self._warm(request))

    def _warm(self, request: dict[str, Any]) -> None:
        llama = self._ensure_loaded()
        prefix = self._prefix_tokens(llama, request)
        if not prefix:
            return
        run = PromptRun(llama, threading.Event(), self._context_size, prefix=prefix,
                        prefix_cache=self._prefix_cache)
        run.prompt = [*prefix, -1]  # anything longer than the prefix that starts with it
        run._prepare_prefix()

    # --- tokens --------------------------------------------------------------------------
    def _vocab(self) -> VocabTokenizer:
        with self._tokenizer_lock:
            if self._tokenizer is None:
                from desktop_app.core.llm.llama_loading import VocabTokenizer

                self._tokenizer = VocabTokenizer(self._path)
            return self._tokenizer

    def count_tokens(self, text: str) -> int:
        """Exact count with the model's own tokenizer (no BOS, special tokens as text)."""
        return len(self._vocab().tokenize(text))

    @property
    def last_prompt(self) -> str:
        """The last prompt exactly as the model saw it (chat template applied), as text."""
        return self._vocab().detokenize(self._last_prompt) if self._last_prompt else ""

    # --- shutdown ------------------------------------------------------------------------
    async def aclose(self) -> None:
        """Stop running generations, free the model and end the worker thread."""
        for cancel in list(self._active):
            cancel.set()
        if not self._worker.closed and self._worker.thread is not None:
            with contextlib.suppress(Exception):
                await self._run_on_worker(self._free)
        await asyncio.wrap_future(self._worker.shutdown())
        thread = self._worker.thread
        if thread is not None:
            thread.join(timeout=1.0)  # it has already answered the stop job: returns at once
        with self._tokenizer_lock:
            if self._tokenizer is not None:
                self._tokenizer.close()
                self._tokenizer = None

    def _free(self) -> None:
        if self._llama is not None:
            self._llama.close()
            self._llama = None
