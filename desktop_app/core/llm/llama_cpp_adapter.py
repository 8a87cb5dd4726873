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
* **Tools in the model's own format.** When the GGUF's template knows tools (Qwen/Hermes
  ``<tool_call>``, Mistral, Llama 3; ``tool_format.detect_tool_style``), ``tools`` go to the
  template and calls are parsed from the text: ``tool_call=True``. A forced ``tool_choice``
  is decoded under a grammar of that one call. Streamed text is held back only while it
  could still be a call, so a direct answer streams from its first word.
* **Prefix states.** The system turn (instructions and tools) is evaluated once and its
  state kept on disk (``prompt_cache``), so a new process does not pay for it again.
* **Abilities.** ``json_mode`` only with ``constrained_json=True``, which turns
  ``response_format={"type": "json_object"[, "schema": {...}]}`` into a llama.cpp grammar
  so the output is always parseable JSON.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import AsyncGenerator, AsyncIterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, cast

from desktop_app.core.errors import (
    DesktopAppError,
    LLMError,
)
from desktop_app.core.llm.base import LLM, ToolChoice, ToolSpec
from desktop_app.core.llm.llama_generation import (
    GenerationStats,
    PromptRun,
    render_prefix,
    stream_completion,
)
from desktop_app.core.llm.llama_lifecycle import LlamaLifecycle
from desktop_app.core.llm.llama_messages import (
    TEXT_ONLY_GRAMMAR,
    any_call_grammar,
    compact_tools,
    forced_call_grammar,
    forced_tool,
    name_choice_grammar,
    native_message,
    plain_message,
)
from desktop_app.core.llm.llama_replies import (
    CALLED_NAME,
    CHOICE_TOKENS,
    SAMPLING_OPTIONS,
    known_calls,
    local_response_format,
    translate_error,
    with_ids,
)
from desktop_app.core.llm.llama_worker import ModelWorker, ThreadToAsyncChannel
from desktop_app.core.llm.loops import cut_looping_call
from desktop_app.core.llm.tool_format import (
    ToolCallSniffer,
    ToolStyle,
    call_shaped,
    closest_tool,
    detect_tool_style,
)
from desktop_app.core.llm.types import (
    ChatMessage,
    LLMResult,
    StreamChunk,
    ToolCall,
    Usage,
    make_abilities,
)

if TYPE_CHECKING:  # llama.cpp is imported lazily: constructing a model must stay cheap
    from desktop_app.core.llm.llama_loading import HookedLlama, VocabTokenizer
    from desktop_app.core.llm.prompt_cache import PrefixStateCache

__all__ = ["GenerationStats", "LlamaCppLLM"]


class LlamaCppLLM(LlamaLifecycle, LLM):
    """A local GGUF model. Construction is cheap; the model loads on first use or ``load()``.

    ``native_tools``: None (default) uses the template's trained tool format when it has
    one; False always uses plain text (the engine then runs its JSON-mode loop).
    ``prompt_cache_dir``: where system-prefix states are kept (None: not on disk).
    """

    def __init__(self, path: str | Path, *, name: str | None = None, context_size: int = 4096,
                 n_threads: int | None = None, constrained_json: bool = False,
                 chat_format: str | None = None, verbose: bool = False,
                 native_tools: bool | None = None,
                 prompt_cache_dir: Path | None = None, gpu_layers: int = 0) -> None:
        self._path = Path(path).expanduser()
        self._name = name or self._path.stem
        self._context_size = context_size
        self._n_threads = n_threads
        self._constrained_json = constrained_json
        self._chat_format = chat_format
        self._verbose = verbose
        self._native_tools = native_tools
        self._prompt_cache_dir = prompt_cache_dir
        self._gpu_layers = gpu_layers
        self._prefix_cache: PrefixStateCache | None = None
        self._tool_style: ToolStyle | None | Literal[False] = False  # False: not read yet
        self._worker = ModelWorker(self._name)
        self._llama: HookedLlama | None = None  # touched only on the worker thread
        self._tokenizer: VocabTokenizer | None = None
        self._tokenizer_lock = threading.Lock()
        self._active: set[threading.Event] = set()
        self._last_prompt: list[int] = []
        self.last_stats: GenerationStats | None = None
        #: ``threading.get_ident()`` of the thread that loaded the model (0: not loaded).
        self.load_thread_id = 0
        #: How long the last load took (0.0: not loaded yet).
        self.load_seconds = 0.0

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
    def reuses_prompt_prefix(self) -> bool:
        return True

    @property
    def tool_style(self) -> ToolStyle | None:
        """The template's trained tool-call format (None: none, or turned off)."""
        if self._native_tools is False or self._chat_format:
            return None  # a named chat format renders no tools
        if self._tool_style is False:
            try:
                template = self._vocab().metadata().get("tokenizer.chat_template")
            except DesktopAppError:
                template = None  # unreadable file: loading will say what is wrong
            self._tool_style = detect_tool_style(template)
        return self._tool_style or None

    @property
    def abilities(self) -> dict[str, bool]:
        return make_abilities(tool_call=self.tool_style is not None,
                              json_mode=self._constrained_json, streaming=True)

    @property
    def worker_thread(self) -> threading.Thread | None:
        """The dedicated thread all llama.cpp work runs on (None before first use)."""
        return self._worker.thread

    @property
    def loaded(self) -> bool:
        return self._llama is not None

    @property
    def busy(self) -> bool:
        """A generation is running on this model now."""
        return bool(self._active)

    # --- generation ----------------------------------------------------------------------
    def _request(self, messages: Sequence[ChatMessage], tools: list[ToolSpec] | None,
                 tool_choice: ToolChoice, response_format: dict[str, Any] | None,
                 temperature: float | None, max_tokens: int | None) -> dict[str, Any]:
        request: dict[str, Any] = {}
        if self.tool_style is not None:
            # A template that knows tools also renders calls and tool results in the form
            # the model was trained on, with or without tools offered this time.
            request["messages"] = [native_message(m) for m in messages]
        else:
            request["messages"] = [plain_message(m) for m in messages]
        if tools and self.tool_style is not None:
            compact = compact_tools(tools)
            # The tools stay in the template even for tool_choice "none": the system turn
            # (and its cached state) is the same, and a grammar keeps the reply text.
            request["tools"] = compact
            forced = forced_tool(compact, tool_choice)
            if forced is not None:
                request["_grammar"] = forced_call_grammar(forced, self.tool_style)
            elif tool_choice == "required":
                request["_grammar"] = any_call_grammar(compact, self.tool_style)
            elif tool_choice == "none":
                request["_grammar"] = TEXT_ONLY_GRAMMAR
        if temperature is not None:
            request["temperature"] = temperature
        if max_tokens is not None:
            request["max_tokens"] = max_tokens
        if self._constrained_json and "_grammar" not in request:
            local_format = local_response_format(response_format)
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
        sampling: Mapping[str, Any] | None = None,
    ) -> AsyncIterator[StreamChunk]:
        """Text deltas as llama.cpp produces them; the last chunk carries usage and, with
        ``tools`` on a model with a trained tool format, the tool calls.

        ``sampling``: more of llama.cpp's options for this request (``SAMPLING_OPTIONS``:
        stop strings, seed, top_p, penalties, a ``response_format`` in llama.cpp's form —
        ``local_response_format`` — enforced by a grammar even for a model whose settings
        do not constrain JSON), as an API client sends them.
        Cancelling the consuming task (or closing this iterator) stops generation.
        """
        request = self._request(messages, tools, tool_choice, response_format, temperature,
                                max_tokens)
        request.update({k: v for k, v in (sampling or {}).items()
                        if k in SAMPLING_OPTIONS and v is not None})
        text_only = request.get("_grammar") == TEXT_ONLY_GRAMMAR
        if self.tool_style is None or text_only or "response_format" in request:
            # Nothing here can be a call. (A forced call's grammar output is parsed below.)
            async with contextlib.aclosing(self._raw_stream(request)) as raw:
                async for chunk in raw:
                    yield chunk
            return
        offered = {t["function"]["name"] for t in request.get("tools", [])}
        sniffer = ToolCallSniffer(offered)
        final: StreamChunk | None = None
        async with contextlib.aclosing(self._raw_stream(request)) as raw:
            async for chunk in raw:
                if chunk.reasoning:
                    yield StreamChunk(reasoning=chunk.reasoning)
                if chunk.content:
                    visible = sniffer.feed(chunk.content)
                    if visible:
                        yield StreamChunk(content=visible)
                    if sniffer.complete():  # the call is whole: do not wait for the rest
                        break
                    if sniffer.is_call and (cut := cut_looping_call(sniffer.text)) is not None:
                        sniffer.text = cut  # arguments loop: one copy kept (or no call)
                        break
                if chunk.usage is not None or chunk.finish_reason is not None:
                    final = chunk
        if final is None:  # stopped early above: the worker has finished that job
            await self._run_on_worker(lambda: None)
            final = StreamChunk(usage=self._usage_of_last(), finish_reason="stop",
                                first_token_s=(self.last_stats.time_to_first_token
                                               if self.last_stats else None))
        calls = known_calls(sniffer, offered)
        if (not calls and sniffer.is_call and not sniffer.shown
                and call_shaped(sniffer.text)):
            # A call to a tool that does not exist (or none were offered): the model meant
            # to answer. Answer again, as text and without the tool list this time (with
            # it, the bundled model wrote call-like text again); nothing was shown yet.
            retry = {k: v for k, v in request.items() if k != "tools"}
            retry["_grammar"] = TEXT_ONLY_GRAMMAR
            async with contextlib.aclosing(self._raw_stream(retry)) as raw:
                async for chunk in raw:
                    if chunk.usage is not None and final.usage is not None:
                        # No first_token_s: the retry's clock started late; its text is
                        # shown as it comes, so its arrival is the first token.
                        chunk = StreamChunk(content=chunk.content, usage=final.usage + chunk.usage,
                                            finish_reason=chunk.finish_reason)
                    yield chunk
            return
        rest = "" if calls else sniffer.finish()
        yield StreamChunk(content=rest, usage=final.usage,
                          finish_reason="tool_calls" if calls else final.finish_reason,
                          tool_calls=with_ids(calls), first_token_s=final.first_token_s)

    async def choose_tool(self, messages: Sequence[ChatMessage],
                          tools: list[ToolSpec]) -> str | None:
        """The tool the model would call first for ``messages``, or None when it would
        answer instead. Decided from the first few tokens of its free reply (greedy): a
        reply that is text is an answer; a call of a name no offered tool is close to
        gives that name. The prompt is the loop's own, so its KV cache serves the turn
        that follows."""
        names = {t["function"]["name"] for t in tools}
        request = self._request(messages, tools, None, None, 0.0, CHOICE_TOKENS)
        request["stop"] = ['",', '"}', "\n\n"]  # the name is all that is needed
        match = CALLED_NAME.search(await self._text_of(request) + '"')
        if match is None:
            return None
        return closest_tool(match.group(1), names) or match.group(1)

    async def choose_among(self, messages: Sequence[ChatMessage], tools: list[ToolSpec],
                           names: Sequence[str]) -> str | None:
        """The model's first call begun again with its name held to one of ``names`` (a
        grammar), the same prompt otherwise."""
        request = self._request(messages, tools, None, None, 0.0, CHOICE_TOKENS)
        request["_grammar"] = name_choice_grammar(names, self.tool_style)
        match = CALLED_NAME.search(await self._text_of(request))
        return match.group(1) if match is not None and match.group(1) in names else None

    async def _text_of(self, request: dict[str, Any]) -> str:
        text = ""
        async with contextlib.aclosing(self._raw_stream(request)) as raw:
            async for chunk in raw:
                text += chunk.content
        return text

    async def _raw_stream(self, request: dict[str, Any]) -> AsyncGenerator[StreamChunk, None]:
        """The worker's chunks for one request, as produced; closing it stops generation."""
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

    def _usage_of_last(self) -> Usage | None:
        stats = self.last_stats
        return Usage.of(stats.prompt_tokens, stats.completion_tokens) if stats else None

    async def chat(
        self,
        messages: Sequence[ChatMessage],
        *,
        tools: list[ToolSpec] | None = None,
        tool_choice: ToolChoice = None,
        response_format: dict[str, Any] | None = None,
        temperature: float | None = None,
        max_tokens: int | None = None,
        sampling: Mapping[str, Any] | None = None,
    ) -> LLMResult:
        """The whole answer; built on the stream so it is cancellable in the same way."""
        parts: list[str] = []
        thinking: list[str] = []
        calls: list[ToolCall] = []
        usage = Usage()
        finish_reason: str | None = None
        stream = cast(AsyncGenerator[StreamChunk, None], self.stream_chat(
            messages, tools=tools, tool_choice=tool_choice, response_format=response_format,
            temperature=temperature, max_tokens=max_tokens, sampling=sampling))
        async with contextlib.aclosing(stream):
            async for chunk in stream:
                parts.append(chunk.content)
                thinking.append(chunk.reasoning)
                calls.extend(chunk.tool_calls)
                if chunk.usage is not None:
                    usage = chunk.usage
                finish_reason = chunk.finish_reason or finish_reason
        reasoning = "".join(thinking) or None
        return LLMResult(message=ChatMessage.assistant("".join(parts), tool_calls=calls,
                                                       reasoning_content=reasoning),
                         usage=usage, finish_reason=finish_reason, model=self.model_id)

    def _prefix_tokens(self, llama: HookedLlama, request: dict[str, Any]) -> list[int] | None:
        """The system turn's tokens when they are worth caching on disk."""
        messages = request["messages"]
        if self._prefix_cache is None or not messages or messages[0]["role"] != "system":
            return None
        return render_prefix(llama, messages[0], request.get("tools"))

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
            run = PromptRun(llama, cancel, self._context_size,
                            prefix=self._prefix_tokens(llama, request),
                            prefix_cache=self._prefix_cache)
            try:
                stream_completion(llama, request, run, cancel, channel, stats, started)
            finally:
                self._last_prompt = run.prompt
            stats.prompt_tokens = len(run.prompt)
            stats.reused_prompt_tokens = run.reused
            stats.prefix_source = run.prefix_source
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
                    finish_reason=stats.finish_reason,
                    first_token_s=stats.time_to_first_token))
            channel.close()
        except DesktopAppError as exc:
            channel.fail(exc)
        except Exception as exc:  # noqa: BLE001 - handed to the awaiting stream
            channel.fail(translate_error(exc, self._name))
