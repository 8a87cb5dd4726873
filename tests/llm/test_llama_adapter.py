"""LlamaCppLLM against the real bundled model (Qwen2.5-Coder-0.5B-Instruct, llama.cpp)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import threading
import time
import uuid
from pathlib import Path

import pytest

from desktop_app.core.errors import (
    ContextOverflowError,
    IncompatibleBuildError,
    LLMError,
    ModelFileError,
)
from desktop_app.core.llm.llama_cpp_adapter import LlamaCppLLM
from desktop_app.core.llm.types import ChatMessage, StreamChunk, ToolCall

pytestmark = pytest.mark.real_model


def _collect(llm: LlamaCppLLM, messages: list[ChatMessage], **kwargs: object) -> list[StreamChunk]:
    async def run() -> list[StreamChunk]:
        return [chunk async for chunk in llm.stream_chat(messages, **kwargs)]  # type: ignore[arg-type]

    return asyncio.run(run())


def test_loads_on_its_worker_thread(bundled_llm: LlamaCppLLM) -> None:
    seen: list[float] = []
    asyncio.run(bundled_llm.load(seen.append))
    assert bundled_llm.loaded and seen == [0.0, 1.0]
    worker = bundled_llm.worker_thread
    assert worker is not None and worker.is_alive()
    assert bundled_llm.load_thread_id == worker.ident != threading.get_ident()


def test_streams_several_chunks_then_usage(bundled_llm: LlamaCppLLM) -> None:
    chunks = _collect(bundled_llm, [ChatMessage.user("Name three primary colors.")],
                      max_tokens=24, temperature=0.0)
    text_chunks = [c for c in chunks if c.content]
    assert len(text_chunks) >= 3 and "".join(c.content for c in text_chunks).strip()
    final = chunks[-1]
    assert final.content == "" and final.usage is not None and final.finish_reason
    assert final.usage.prompt_tokens > 10 and 1 <= final.usage.completion_tokens <= 24
    assert all(c.usage is None for c in chunks[:-1])


def test_generation_runs_off_the_event_loop_thread(bundled_llm: LlamaCppLLM) -> None:
    async def run() -> tuple[int, int]:
        loop_thread = threading.get_ident()
        async for _ in bundled_llm.stream_chat([ChatMessage.user("Hi")], max_tokens=4):
            pass
        return loop_thread, threading.get_ident()

    loop_thread, _ = asyncio.run(run())
    stats = bundled_llm.last_stats
    assert stats is not None and bundled_llm.worker_thread is not None
    assert stats.thread_id == bundled_llm.worker_thread.ident != loop_thread


def test_tokens_arrive_while_generation_is_still_running(bundled_llm: LlamaCppLLM) -> None:
    async def run() -> tuple[float, float]:
        first = last = 0.0
        start = time.perf_counter()
        async for chunk in bundled_llm.stream_chat(
                [ChatMessage.user("Count from 1 to 30 separated by spaces.")], max_tokens=40):
            if chunk.content and not first:
                first = time.perf_counter() - start
            last = time.perf_counter() - start
        return first, last

    first, last = asyncio.run(run())
    assert 0 < first < last  # the first token was delivered before the answer ended
    stats = bundled_llm.last_stats
    assert stats is not None and stats.completion_tokens >= 10


def test_cancelling_the_consumer_stops_within_a_token(bundled_llm: LlamaCppLLM) -> None:
    async def run() -> tuple[int, float]:
        received = 0

        async def consume() -> None:
            nonlocal received
            async for chunk in bundled_llm.stream_chat(
                    [ChatMessage.user("Write the numbers from 1 to 300, one per line.")],
                    max_tokens=400):
                if chunk.content:
                    received += 1

        task = asyncio.create_task(consume())
        while received < 5:
            await asyncio.sleep(0.001)
        task.cancel()
        cancelled_at = time.perf_counter()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        got = received
        await bundled_llm.wait_idle()  # the worker has finished the cancelled job
        return got, time.perf_counter() - cancelled_at

    received, seconds = asyncio.run(run())
    stats = bundled_llm.last_stats
    assert stats is not None and stats.cancelled
    # Each text chunk is one token here; at most the token in flight is produced after it.
    assert stats.completion_tokens - received <= 2
    assert seconds < 3.0  # one token is ~40 ms; generous for a busy machine


def test_breaking_out_of_the_stream_stops_generation(bundled_llm: LlamaCppLLM) -> None:
    async def run() -> int:
        received = 0
        stream = bundled_llm.stream_chat([ChatMessage.user("Tell a long story about a cat.")],
                                         max_tokens=300)
        async with contextlib.aclosing(stream):
            async for chunk in stream:
                received += bool(chunk.content)
                if received == 3:
                    break
        await bundled_llm.wait_idle()
        return received

    received = asyncio.run(run())
    stats = bundled_llm.last_stats
    assert stats is not None and stats.cancelled and stats.completion_tokens <= received + 2


def test_chat_template_from_the_gguf_is_applied(bundled_llm: LlamaCppLLM) -> None:
    asyncio.run(bundled_llm.chat([ChatMessage.system("Be brief."), ChatMessage.user("Hello")],
                                 max_tokens=2))
    assert bundled_llm.last_prompt == ("<|im_start|>system\nBe brief.<|im_end|>\n"
                                       "<|im_start|>user\nHello<|im_end|>\n"
                                       "<|im_start|>assistant\n")


def test_the_template_is_the_gguf_s_own_not_generic_chatml(bundled_model_path: Path,
                                                           bundled_llm: LlamaCppLLM) -> None:
    # Qwen2.5's own template adds its default system prompt when none is given; plain
    # ChatML (a named chat_format, for GGUFs without a template) does not.
    asyncio.run(bundled_llm.chat([ChatMessage.user("Hello")], max_tokens=1))
    assert bundled_llm.last_prompt.startswith("<|im_start|>system\nYou are Qwen, created by")
    chatml = LlamaCppLLM(bundled_model_path, context_size=512, chat_format="chatml")
    try:
        asyncio.run(chatml.chat([ChatMessage.user("Hello")], max_tokens=1))
        assert "<|im_start|>user\nHello<|im_end|>" in chatml.last_prompt
        assert "You are Qwen" not in chatml.last_prompt
    finally:
        asyncio.run(chatml.aclose())


def test_chat_reports_usage_and_length_limit(bundled_llm: LlamaCppLLM) -> None:
    result = asyncio.run(bundled_llm.chat(
        [ChatMessage.user("Write a long poem about the sea.")], max_tokens=7, temperature=0.0))
    assert result.message.role == "assistant" and result.message.content.strip()
    assert result.finish_reason == "length"
    assert result.usage.completion_tokens == 7
    assert result.usage.prompt_tokens == bundled_llm.last_stats.prompt_tokens > 5  # type: ignore[union-attr]
    assert result.usage.total_tokens == result.usage.prompt_tokens + 7
    assert result.model == bundled_llm.model_id


def test_usage_excludes_the_end_of_turn_token(bundled_llm: LlamaCppLLM) -> None:
    result = asyncio.run(bundled_llm.chat(
        [ChatMessage.user("Say hello.")], max_tokens=40, temperature=0.0))
    assert result.finish_reason == "stop"
    # Same accounting as llama-cpp-python's own non-streaming usage (checked by hand).
    assert result.usage.completion_tokens == bundled_llm.count_tokens(result.message.content)


def test_kv_cache_is_reused_when_the_prompt_extends(bundled_llm: LlamaCppLLM) -> None:
    # A unique, long system prompt so nothing of it is cached from earlier tests.
    system = f"Session {uuid.uuid4()}. " + "You answer questions about fruit. " * 20
    first = [ChatMessage.system(system), ChatMessage.user("Name a red fruit.")]
    reply = asyncio.run(bundled_llm.chat(first, max_tokens=8, temperature=0.0))
    cold = bundled_llm.last_stats
    assert cold is not None and cold.prompt_eval_tokens > 100

    extended = [*first, reply.message, ChatMessage.user("And a yellow one?")]
    asyncio.run(bundled_llm.chat(extended, max_tokens=4, temperature=0.0))
    warm = bundled_llm.last_stats
    assert warm is not None
    assert warm.reused_prompt_tokens >= cold.prompt_tokens
    # llama.cpp's own counters: only the new tail was evaluated, and faster.
    assert warm.prompt_eval_tokens <= warm.prompt_tokens - cold.prompt_tokens
    assert warm.prompt_eval_ms < cold.prompt_eval_ms


def test_default_abilities_use_the_template_s_trained_tool_format(
        bundled_llm: LlamaCppLLM, bundled_model_path: Path) -> None:
    abilities = bundled_llm.abilities
    assert bundled_llm.tool_style == "hermes"  # Qwen's template knows <tool_call>
    assert abilities["tool_call"] is True and abilities["json_mode"] is False
    assert abilities["streaming"] is True and bundled_llm.context_size == 4096
    plain = LlamaCppLLM(bundled_model_path, native_tools=False)
    assert plain.abilities["tool_call"] is False and plain.tool_style is None


def test_constrained_json_always_parses(bundled_model_path: Path) -> None:
    llm = LlamaCppLLM(bundled_model_path, context_size=2048, constrained_json=True)
    schema = {"type": "object", "properties": {"city": {"type": "string"},
                                                "population": {"type": "integer"}},
              "required": ["city", "population"]}

    async def run() -> str:
        try:
            result = await llm.chat(
                [ChatMessage.user("Tell me about Paris.")],  # no JSON asked for in the prompt
                response_format={"type": "json_object", "schema": schema}, max_tokens=60)
            return result.message.content
        finally:
            await llm.aclose()

    assert llm.abilities["json_mode"] is True
    value = json.loads(asyncio.run(run()))
    assert isinstance(value["city"], str) and isinstance(value["population"], int)


def test_tools_and_tool_messages_do_not_break_a_local_model(bundled_llm: LlamaCppLLM) -> None:
    tool = {"type": "function", "function": {"name": "get_weather_xyz", "description": "w",
                                             "parameters": {"type": "object", "properties": {}}}}
    history = [ChatMessage.user("Weather?"),
               ChatMessage.assistant("", tool_calls=[ToolCall(id="1", name="get_weather_xyz")]),
               ChatMessage.tool("sunny", tool_call_id="1", name="get_weather_xyz"),
               ChatMessage.user("So, is it sunny?")]
    result = asyncio.run(bundled_llm.chat(history, tools=[tool], tool_choice="auto",
                                          max_tokens=30))
    assert result.message.content or result.message.tool_calls
    prompt = bundled_llm.last_prompt
    # Qwen's own format: the tool list in the system turn, results as <tool_response>.
    assert '"name": "get_weather_xyz"' in prompt and "<tool_response>\nsunny" in prompt


def test_a_template_without_tool_support_gets_tool_messages_as_text(
        bundled_model_path: Path) -> None:
    llm = LlamaCppLLM(bundled_model_path, context_size=2048, native_tools=False)
    history = [ChatMessage.user("Weather?"),
               ChatMessage.assistant("", tool_calls=[ToolCall(id="1", name="get_weather_xyz")]),
               ChatMessage.tool("sunny", tool_call_id="1", name="get_weather_xyz"),
               ChatMessage.user("So, is it sunny?")]
    try:
        result = asyncio.run(llm.chat(history, max_tokens=6))
        assert result.message.content and not result.message.tool_calls
        prompt = llm.last_prompt
        assert "Result of tool 'get_weather_xyz'" in prompt and "sunny" in prompt
        assert "<tools>" not in prompt
    finally:
        asyncio.run(llm.aclose())


def test_count_tokens_uses_the_model_tokenizer(bundled_llm: LlamaCppLLM) -> None:
    assert bundled_llm.count_tokens("Hello world") == 2
    assert bundled_llm.count_tokens("") == 0
    assert bundled_llm.count_tokens("<|im_start|>") > 1  # text, not the special token


def test_prompt_longer_than_the_context_is_a_context_error(bundled_llm: LlamaCppLLM) -> None:
    long_text = "apple banana cherry " * 2000  # about 6,000 tokens > 4,096
    with pytest.raises(ContextOverflowError, match="context"):
        asyncio.run(bundled_llm.chat([ChatMessage.user(long_text)], max_tokens=1))
    # The model is still usable afterwards.
    assert asyncio.run(bundled_llm.chat([ChatMessage.user("Hi")], max_tokens=2)).message.content


def test_one_model_serves_several_event_loops_and_concurrent_requests(bundled_llm) -> None:
    async def two_at_once() -> list[str]:
        results = await asyncio.gather(
            bundled_llm.chat([ChatMessage.user("Say yes.")], max_tokens=3),
            bundled_llm.chat([ChatMessage.user("Say no.")], max_tokens=3))
        return [r.message.content for r in results]

    for _ in range(2):  # a fresh loop each time
        assert all(asyncio.run(two_at_once()))


# --- errors before or while loading --------------------------------------------------------
def _load_error(path: Path) -> ModelFileError:
    llm = LlamaCppLLM(path)
    try:
        with pytest.raises(ModelFileError) as info:
            asyncio.run(llm.load())
        return info.value
    finally:
        asyncio.run(llm.aclose())


def test_missing_file_is_a_model_file_error(tmp_path: Path) -> None:
    error = _load_error(tmp_path / "nope.gguf")
    assert "does not exist" in str(error) and "Settings" in str(error)


def test_non_gguf_file_is_rejected_before_loading(tmp_path: Path) -> None:
    fake = tmp_path / "notes.gguf"
    fake.write_text("just some text, not a model")
    assert "not a GGUF model file" in str(_load_error(fake))


def test_truncated_gguf_is_a_model_file_error(bundled_model_path: Path, tmp_path: Path) -> None:
    truncated = tmp_path / "truncated.gguf"
    with bundled_model_path.open("rb") as src:
        truncated.write_bytes(src.read(3_000_000))  # a real header, then nothing
    assert "corrupt, truncated" in str(_load_error(truncated))


def test_errors_also_reach_a_streaming_consumer(tmp_path: Path) -> None:
    llm = LlamaCppLLM(tmp_path / "missing.gguf")
    with pytest.raises(ModelFileError):
        _collect(llm, [ChatMessage.user("Hi")])
    asyncio.run(llm.aclose())


def test_amx_build_on_amx_cpu_is_refused() -> None:
    from desktop_app.core.llm.llama_loading import check_cpu_compatibility

    amx_build = "CPU : SSE3 = 1 | AVX2 = 1 | AMX_INT8 = 1 | OPENMP = 1 |"
    amx_cpu = "processor : 0\nflags : fpu sse avx2 amx_bf16 amx_tile amx_int8\n"
    with pytest.raises(IncompatibleBuildError, match="packaging/install.sh"):
        check_cpu_compatibility(amx_build, amx_cpu)
    check_cpu_compatibility(amx_build, "flags : fpu sse avx2\n")  # no AMX CPU: fine
    check_cpu_compatibility("CPU : AVX2 = 1 |", amx_cpu)  # portable build: fine


def test_installed_llama_cpp_build_passes_the_guard() -> None:
    import llama_cpp

    from desktop_app.core.llm.llama_loading import check_cpu_compatibility

    check_cpu_compatibility()
    assert "AMX_INT8 = 1" not in llama_cpp.llama_print_system_info().decode()


def test_aclose_stops_the_worker_and_refuses_new_work(bundled_model_path: Path) -> None:
    llm = LlamaCppLLM(bundled_model_path, context_size=512)
    asyncio.run(llm.chat([ChatMessage.user("Hi")], max_tokens=1))
    worker = llm.worker_thread
    asyncio.run(llm.aclose())
    assert worker is not None and not worker.is_alive() and not llm.loaded
    with pytest.raises(LLMError, match="closed"):
        asyncio.run(llm.chat([ChatMessage.user("Hi")], max_tokens=1))


@pytest.mark.skipif(not hasattr(os, "setpriority"), reason="no per-thread priority here")
def test_the_model_worker_and_the_threads_it_starts_yield_to_the_window() -> None:
    import threading

    from desktop_app.core.llm.llama_worker import WORKER_NICENESS, ModelWorker

    def niceness() -> int:
        return os.getpriority(os.PRIO_PROCESS, threading.get_native_id())

    def in_worker() -> tuple[int, int]:
        seen: list[int] = []
        child = threading.Thread(target=lambda: seen.append(niceness()))
        child.start()
        child.join()
        return niceness(), seen[0]

    worker = ModelWorker("probe")
    own = niceness()
    try:
        worker_nice, child_nice = worker.submit(in_worker).result(timeout=10)
    finally:
        worker.shutdown().result(timeout=10)
    assert worker_nice == child_nice == min(19, own + WORKER_NICENESS)
    assert niceness() == own  # the caller (the window's thread) keeps its priority
