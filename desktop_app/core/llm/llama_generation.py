"""One generation on a local model's worker thread: prompt hook, prefix state, stats.

Runs only on the model's :class:`~desktop_app.core.llm.llama_worker.ModelWorker`. The chat
handler (the GGUF's Jinja template or a named format) formats and tokenizes the request;
``HookedLlama`` then hands the exact prompt tokens to :meth:`PromptRun.hook`, which checks
the context size, restores or saves the system-prefix state (``prompt_cache``), resets
llama.cpp's counters and adds a per-token stop check.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from desktop_app.core.errors import ContextOverflowError
from desktop_app.core.llm.think_splitter import ThinkSplitter
from desktop_app.core.llm.types import StreamChunk

if TYPE_CHECKING:
    from llama_cpp import StoppingCriteriaList
    from llama_cpp.llama_types import ChatCompletionRequestMessage, ChatCompletionTool

    from desktop_app.core.llm.llama_loading import HookedLlama
    from desktop_app.core.llm.llama_worker import ThreadToAsyncChannel
    from desktop_app.core.llm.prompt_cache import PrefixStateCache


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
    #: "memory" (already in the KV cache), "disk" (restored), "saved" (evaluated and
    #: stored) or "" (no cacheable prefix) for the system prefix of this prompt.
    prefix_source: str = ""


class PromptRun:
    """Per-request state on the worker: sees the prompt, counts tokens, stops on request."""

    def __init__(self, llama: HookedLlama, cancel: threading.Event, context_size: int, *,
                 prefix: list[int] | None = None,
                 prefix_cache: PrefixStateCache | None = None) -> None:
        self.llama = llama
        self.cancel = cancel
        self.context_size = context_size
        self.prefix = prefix or []
        self.prefix_cache = prefix_cache
        self.prefix_source = ""
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
        self._prepare_prefix()
        self.reused = Llama.longest_token_prefix(
            self.llama._input_ids.tolist(), self.prompt)
        llama_cpp.llama_perf_context_reset(self.llama.ctx)
        return StoppingCriteriaList([*(criteria or []), self._check])

    def _prepare_prefix(self) -> None:
        """Make sure the system prefix is in the KV cache: from memory, disk, or evaluated
        once and saved for the next process."""
        from llama_cpp import Llama

        prefix = self.prefix
        if (self.prefix_cache is None or len(prefix) < 32 or len(prefix) >= len(self.prompt)
                or self.prompt[:len(prefix)] != prefix):
            return
        llama = self.llama
        have = Llama.longest_token_prefix(llama._input_ids.tolist(), prefix)
        if have >= len(prefix):
            self.prefix_source = "memory"
            return
        if self.prefix_cache.restore(llama, prefix):
            self.prefix_source = "disk"
            return
        llama.reset()  # type: ignore[no-untyped-call]  # unannotated in llama_cpp
        llama.eval(prefix)
        self.prefix_cache.save(llama, prefix)
        self.prefix_source = "saved"

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


def render_prefix(llama: HookedLlama, system: dict[str, Any],
                  tools: list[dict[str, Any]] | None) -> list[int] | None:
    """The tokens of the system turn (instructions + tools) exactly as the full prompt
    starts, or None when the template cannot say (then nothing is cached)."""
    from llama_cpp.llama_chat_format import Jinja2ChatFormatter

    template = llama.metadata.get("tokenizer.chat_template")
    if not template:
        return None
    vocab = llama._model
    try:
        eos = vocab.token_get_text(vocab.token_eos())
        bos = vocab.token_get_text(vocab.token_bos()) if vocab.token_bos() >= 0 else ""
        formatter = Jinja2ChatFormatter(template=template, eos_token=eos, bos_token=bos,
                                        add_generation_prompt=False)
        # The request's plain dicts have the shape of llama_cpp's message and tool TypedDicts.
        text = formatter(messages=[cast("ChatCompletionRequestMessage", system)],
                         tools=cast("list[ChatCompletionTool] | None", tools)).prompt
    except Exception:  # noqa: BLE001 - no cache, not an error
        return None
    # Tokenized like the chat handler does (the template adds any BOS itself).
    return list(llama.tokenize(text.encode("utf-8"), add_bos=False, special=True))



def prompt_opens_think(llama: Any, prompt: list[int]) -> bool:
    """Whether the rendered prompt ends inside an opened ``<think>`` block (R1-distill and
    Qwen3 templates do this), so the model's first words are reasoning."""
    if not prompt:
        return False
    tail: str = llama.detokenize(prompt[-4:]).decode("utf-8", errors="ignore")
    return tail.rstrip().endswith("<think>")


def stream_completion(llama: Any, request: dict[str, Any], run: PromptRun,
                      cancel: threading.Event, channel: ThreadToAsyncChannel[StreamChunk],
                      stats: GenerationStats, started: float) -> None:
    """Worker thread: one streamed chat completion into ``channel``, recording time to the
    first token and the finish reason in ``stats``; stops when ``cancel`` is set.

    ``request`` may carry ``_grammar`` (GBNF text), compiled here. Reasoning models'
    ``<think>`` blocks are split off at the source, so neither the visible answer nor the
    tool-call parser ever sees them.
    """
    kwargs = dict(request)
    grammar_text = kwargs.pop("_grammar", None)
    if grammar_text is not None:
        from llama_cpp.llama_grammar import LlamaGrammar

        kwargs["grammar"] = LlamaGrammar.from_string(grammar_text, verbose=False)
    llama.request_hook = run.hook
    try:
        stream: Any = llama.create_chat_completion(**kwargs, stream=True)
        splitter: ThinkSplitter | None = None
        try:
            for chunk in stream:
                choice = chunk["choices"][0]
                text = choice["delta"].get("content")
                if text:
                    if stats.time_to_first_token is None:
                        stats.time_to_first_token = time.perf_counter() - started
                    if splitter is None:
                        splitter = ThinkSplitter(inside=prompt_opens_think(llama, run.prompt))
                    part = splitter.feed(text)
                    if part and not channel.put(StreamChunk(content=part.content,
                                                            reasoning=part.reasoning)):
                        cancel.set()  # the consumer's loop is gone
                stats.finish_reason = choice.get("finish_reason") or stats.finish_reason
                if cancel.is_set():
                    break
            rest = splitter.flush() if splitter is not None else None
            if rest:
                channel.put(StreamChunk(content=rest.content, reasoning=rest.reasoning))
        finally:
            stream.close()
    finally:
        llama.request_hook = None
