"""Local GGUF models through llama-cpp-python, behind the project's ``LLM`` interface (SPEC §2).

* **Chat template from the GGUF.** ``chat_format=None`` lets llama-cpp-python build a Jinja2
  formatter from the file's ``tokenizer.chat_template`` (Qwen: ``<|im_start|>`` turns); a
  named ``chat_format`` (e.g. "chatml") overrides it for files without a template.
* **One worker thread per model.** Loading, generation and freeing all run on the model's
  :class:`~desktop_app.core.llm.llama_worker.ModelWorker`; the event loop only awaits.
* **Streaming as produced, cancellation within one token.** Each token is handed to the
  consuming task with ``call_soon_threadsafe``. Cancelling the consumer sets a stop flag
  that a llama.cpp stopping criterion checks before every further token.
* **KV-cache reuse.** One ``Llama`` object is kept and never reset, so llama.cpp's prefix
  matching evaluates only the new tail when a prompt extends the previous one (the tool
  loop); :attr:`LlamaCppLLM.last_stats` shows how many prompt tokens were reused.
* **Abilities.** ``tool_call=False``; ``json_mode`` only with ``constrained_json=True``,
  which turns ``response_format={"type": "json_object"[, "schema": {...}]}`` into a
  llama.cpp grammar so the output is always parseable JSON. ``tools``/``tool_choice`` are
  ignored (the engine runs the JSON-mode loop for models without tool calling).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
import time
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from desktop_app.core.errors import (
    ContextOverflowError,
    DesktopAppError,
    LLMError,
    LLMProviderError,
)
from desktop_app.core.llm.base import LLM, ToolChoice, ToolSpec
from desktop_app.core.llm.llama_worker import ModelWorker, ThreadToAsyncChannel
from desktop_app.core.llm.types import ChatMessage, LLMResult, StreamChunk, Usage, make_abilities

if TYPE_CHECKING:  # llama.cpp is imported lazily: constructing a model must stay cheap
    from llama_cpp import StoppingCriteriaList

    from desktop_app.core.llm.llama_loading import HookedLlama, VocabTokenizer


@dataclass
class GenerationStats:
    """What happened in the last generation (diagnostics, tests and the benchmark)."""

    prompt_tokens: int = 0
    #: Prompt tokens already in the KV cache from the previous call (not evaluated again).
    reused_prompt_tokens: int = 0
    completion_tokens: int = 0
    #: Prompt tokens llama.cpp actually evaluated, and how long that took (its own counters).
    prompt_eval_tokens: int = 0
    prompt_eval_ms: float = 0.0
    #: Seconds from the request reaching llama.cpp to the first text (None: no text).
    time_to_first_token: float | None = None
    seconds: float = 0.0
    finish_reason: str | None = None
    cancelled: bool = False
    #: ``threading.get_ident()`` of the thread llama.cpp ran on.
    thread_id: int = 0


class _Run:
    """Per-request state on the worker: sees the prompt, counts tokens, stops on request."""

    def __init__(self, llama: HookedLlama, cancel: threading.Event, context_size: int) -> None:
        self.llama = llama
        self.cancel = cancel
        self.context_size = context_size
        self.prompt: list[int] = []
        self.reused = 0
        self.sampled = 0
        self._last_len = -1

    def hook(self, prompt: list[int], criteria: StoppingCriteriaList | None) -> StoppingCriteriaList:
        import llama_cpp
        from llama_cpp import Llama, StoppingCriteriaList

        self.prompt = list(prompt)
        if len(prompt) >= self.context_size:
            raise ContextOverflowError(
                f"The conversation is {len(prompt):,} tokens long; this model's context holds "
                f"{self.context_size:,}.",
                hint="Start a new conversation, shorten the input, or raise the model's context "
                     "size in Settings.")
        self.reused = Llama.longest_token_prefix(self.llama._input_ids.tolist(), self.prompt)
        llama_cpp.llama_perf_context_reset(self.llama.ctx)
        return StoppingCriteriaList([*(criteria or []), self._check])

    def prompt_eval(self) -> tuple[int, float]:
        """(tokens, milliseconds) of prompt evaluation since the hook ran."""
        import llama_cpp

        data = llama_cpp.llama_perf_context(self.llama.ctx)
        return int(data.n_p_eval), float(data.t_p_eval_ms)

    def _check(self, input_ids: Any, _logits: Any) -> bool:
        # Called once per sampled token (plus once more at the end with the same length).
        if len(input_ids) > self._last_len:
            self._last_len = len(input_ids)
            self.sampled += 1
        return self.cancel.is_set()


def _to_local_message(message: ChatMessage) -> dict[str, Any]:
    """Wire form for a local chat template, which may not know tool roles or tool calls."""
    if message.role == "tool":
        label = f"Result of tool '{message.name}'" if message.name else "Tool result"
        return {"role": "user", "content": f"[{label}]\n{message.content}"}
    content = message.content
    if message.role == "assistant" and message.tool_calls:
        calls = "\n".join(f'{{"tool": {json.dumps(c.name)}, "args": {c.arguments or "{}"}}}'
                          for c in message.tool_calls)
        content = f"{content}\n{calls}".strip()
    return {"role": message.role, "content": content}


def _local_response_format(response_format: dict[str, Any] | None) -> dict[str, Any] | None:
    """Normalise OpenAI ``json_object``/``json_schema`` formats to llama-cpp-python's form."""
    if not response_format:
        return None
    kind = response_format.get("type")
    if kind == "json_object":
        schema = response_format.get("schema")
        return {"type": "json_object", **({"schema": schema} if schema else {})}
    if kind == "json_schema":
        schema = (response_format.get("json_schema") or {}).get("schema")
        return {"type": "json_object", **({"schema": schema} if schema else {})}
    return None


class LlamaCppLLM(LLM):
    """A local GGUF model. Construction is cheap; the model loads on first use or ``load()``."""

    def __init__(self, path: str | Path, *, name: str | None = None, context_size: int = 4096,
                 n_threads: int | None = None, constrained_json: bool = False,
                 chat_format: str | None = None, verbose: bool = False) -> None:
        self._path = Path(path).expanduser()
        self._name = name or self._path.stem
        self._context_size = context_size
        self._n_threads = n_threads
        self._constrained_json = constrained_json
        self._chat_format = chat_format
        self._verbose = verbose
        self._worker = ModelWorker(self._name)
        self._llama: HookedLlama | None = None  # touched only on the worker thread
        self._tokenizer: VocabTokenizer | None = None
        self._tokenizer_lock = threading.Lock()
        self._active: set[threading.Event] = set()
        self._last_prompt: list[int] = []
        self.last_stats: GenerationStats | None = None
        #: ``threading.get_ident()`` of the thread that loaded the model (0: not loaded).
        self.load_thread_id = 0

    # --- LLM properties ------------------------------------------------------------------
    @property
    def model_id(self) -> str:
        return self._name

    @property
    def path(self) -> Path:
        return self._path

    @property
    def context_size(self) -> int:
        return self._context_size

    @property
    def abilities(self) -> dict[str, bool]:
        return make_abilities(tool_call=False, json_mode=self._constrained_json, streaming=True)

    @property
    def worker_thread(self) -> threading.Thread | None:
        """The dedicated thread all llama.cpp work runs on (None before first use)."""
        return self._worker.thread

    @property
    def loaded(self) -> bool:
        return self._llama is not None

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

            self._llama = load_llama(self._path, context_size=self._context_size,
                                     n_threads=self._n_threads, chat_format=self._chat_format,
                                     verbose=self._verbose)
            self.load_thread_id = threading.get_ident()
            # Ready the tokenizer here too, so count_tokens() never loads it on the loop.
            self._vocab().tokenize("")
        return self._llama

    async def _run_on_worker(self, fn: Callable[[], Any]) -> Any:
        try:
            future = self._worker.submit(fn)
        except RuntimeError as exc:
            raise LLMError(f"The local model '{self._name}' has been closed.",
                           hint="Open it again from the model list.") from exc
        return await asyncio.wrap_future(future)

    async def wait_idle(self) -> None:
        """Wait until everything queued on the worker (including a cancelled stream) ended."""
        await self._run_on_worker(lambda: None)

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

    # --- generation ----------------------------------------------------------------------
    def _request(self, messages: Sequence[ChatMessage], response_format: dict[str, Any] | None,
                 temperature: float | None, max_tokens: int | None) -> dict[str, Any]:
        request: dict[str, Any] = {"messages": [_to_local_message(m) for m in messages]}
        if temperature is not None:
            request["temperature"] = temperature
        if max_tokens is not None:
            request["max_tokens"] = max_tokens
        if self._constrained_json:
            local_format = _local_response_format(response_format)
            if local_format is not None:
                request["response_format"] = local_format
        return request

    async def stream_chat(
        self,
        messages: Sequence[ChatMessage],
        *,
        tools: list[ToolSpec] | None = None,
        tool_choice: ToolChoice = None,
        response_format: dict[str, Any] | None = None,
        temperature: float | None = None,
        max_tokens: int | None = None,
    ) -> AsyncIterator[StreamChunk]:
        """Text deltas as llama.cpp produces them; the last chunk carries usage.

        ``tools``/``tool_choice`` are ignored: this model has no native tool calling.
        Cancelling the consuming task (or closing this iterator) stops generation.
        """
        request = self._request(messages, response_format, temperature, max_tokens)
        channel: ThreadToAsyncChannel[StreamChunk] = ThreadToAsyncChannel(
            asyncio.get_running_loop())
        cancel = threading.Event()
        self._active.add(cancel)
        try:
            try:
                self._worker.submit(lambda: self._generate(request, cancel, channel))
            except RuntimeError as exc:
                raise LLMError(f"The local model '{self._name}' has been closed.",
                               hint="Open it again from the model list.") from exc
            while True:
                more, chunk = await channel.get()
                if not more:
                    return
                assert chunk is not None
                yield chunk
        finally:
            # Reached on normal end, on an error, on task cancellation and on aclose():
            # the worker sees the flag before sampling its next token.
            cancel.set()
            self._active.discard(cancel)

    async def chat(
        self,
        messages: Sequence[ChatMessage],
        *,
        tools: list[ToolSpec] | None = None,
        tool_choice: ToolChoice = None,
        response_format: dict[str, Any] | None = None,
        temperature: float | None = None,
        max_tokens: int | None = None,
    ) -> LLMResult:
        """The whole answer; built on the stream so it is cancellable in the same way."""
        parts: list[str] = []
        usage = Usage()
        finish_reason: str | None = None
        stream = cast(AsyncGenerator[StreamChunk, None], self.stream_chat(
            messages, response_format=response_format, temperature=temperature,
            max_tokens=max_tokens))
        async with contextlib.aclosing(stream):
            async for chunk in stream:
                parts.append(chunk.content)
                if chunk.usage is not None:
                    usage = chunk.usage
                finish_reason = chunk.finish_reason or finish_reason
        return LLMResult(message=ChatMessage.assistant("".join(parts)), usage=usage,
                         finish_reason=finish_reason, model=self.model_id)

    def _generate(self, request: dict[str, Any], cancel: threading.Event,
                  channel: ThreadToAsyncChannel[StreamChunk]) -> None:
        """Worker thread: run one streamed completion, forwarding every piece of text."""
        if cancel.is_set():  # the consumer left before this job started
            channel.close()
            return
        stats = GenerationStats(thread_id=threading.get_ident())
        try:
            llama = self._ensure_loaded()
            started = time.perf_counter()  # after loading: TTFT is about generation
            run = _Run(llama, cancel, self._context_size)
            llama.request_hook = run.hook
            try:
                stream: Any = llama.create_chat_completion(**request, stream=True)
                try:
                    for chunk in stream:
                        choice = chunk["choices"][0]
                        text = choice["delta"].get("content")
                        if text:
                            if stats.time_to_first_token is None:
                                stats.time_to_first_token = time.perf_counter() - started
                            if not channel.put(StreamChunk(content=text)):
                                cancel.set()  # the consumer's loop is gone
                        stats.finish_reason = choice.get("finish_reason") or stats.finish_reason
                        if cancel.is_set():
                            break
                finally:
                    stream.close()
            finally:
                llama.request_hook = None
                self._last_prompt = run.prompt
            stats.prompt_tokens = len(run.prompt)
            stats.reused_prompt_tokens = run.reused
            if run.prompt:
                stats.prompt_eval_tokens, stats.prompt_eval_ms = run.prompt_eval()
            # The token that ended generation (end-of-turn) is sampled but not part of the text.
            ended_by_model = stats.finish_reason == "stop" and not cancel.is_set()
            stats.completion_tokens = max(0, run.sampled - (1 if ended_by_model else 0))
            stats.cancelled = cancel.is_set()
            stats.seconds = time.perf_counter() - started
            self.last_stats = stats
            if not stats.cancelled:
                channel.put(StreamChunk(
                    usage=Usage.of(stats.prompt_tokens, stats.completion_tokens),
                    finish_reason=stats.finish_reason))
            channel.close()
        except DesktopAppError as exc:
            channel.fail(exc)
        except Exception as exc:  # noqa: BLE001 - any library failure reaches the caller typed
            channel.fail(_translate(exc, self._name))

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


def _translate(exc: Exception, name: str) -> LLMError:
    text = str(exc)
    if "exceed context window" in text:
        return ContextOverflowError(f"The prompt does not fit the context of '{name}': {text}.",
                                    hint="Start a new conversation or shorten the input.")
    error = LLMProviderError(f"The local model '{name}' failed: {type(exc).__name__}: {text}",
                             hint="Try again; if it keeps failing, check the model file.")
    error.__cause__ = exc
    return error
