"""A model whose chat template loops for ever or builds a huge string is refused with a
message before it is used, instead of hanging `chat` (Ctrl-C did not stop it) or taking
the process to 5.7 GB; real templates pass."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from hub_fakes import write_tiny_gguf

from desktop_app.core.errors import ModelFileError
from desktop_app.core.llm.llama_cpp_adapter import LlamaCppLLM
from desktop_app.core.llm.template_probe import check_template

LOOP = ("{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}"
        "{{ messages[0].content }}")
HUGE = "{% set s = 'x' * 1500000000 %}{{ s | length }}"
QWEN_LIKE = ("{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n"
             "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")


@pytest.mark.parametrize(("template", "reason"), [(LOOP, "more time"), (HUGE, "more memory")])
def test_a_template_that_hangs_or_exhausts_is_refused(tmp_path: Path, template: str,
                                                      reason: str) -> None:
    started = time.monotonic()
    with pytest.raises(ModelFileError, match=reason):
        check_template(template, tmp_path / f"evil-{len(template)}.gguf")
    assert time.monotonic() - started < 30


def test_real_templates_and_broken_ones_are_left_alone(tmp_path: Path) -> None:
    check_template(QWEN_LIKE, tmp_path / "qwen.gguf")
    check_template("{{ raise_exception('only user and assistant roles') }}",
                   tmp_path / "strict.gguf")  # the normal path reports this one


@pytest.mark.anyio
async def test_loading_such_a_model_fails_with_the_message(tmp_path: Path) -> None:
    path = write_tiny_gguf(tmp_path / "evil.gguf",
                           extra={"tokenizer.chat_template": LOOP})
    llm = LlamaCppLLM(path, name="evil", context_size=512)
    try:
        with pytest.raises(ModelFileError, match="chat template"):
            await llm.load()
    finally:
        await llm.aclose()
