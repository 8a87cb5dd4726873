"""The one place that decides how an agent is set up for a model.

The window, ``desktop-app ask``, Compare and the evaluation all build their agent here, so
what the evaluation measures is what a user gets. Defaults chosen by measurement on the
``everyday`` suite (see README, "Agent quality"):

* a context guard for every model (small local windows fill quickly);
* every tool call stops after ``DEFAULT_TOOL_TIMEOUT`` seconds unless the caller says
  otherwise (a hung tool must not hang the run);
* who writes the answer after tools ran: ``ANSWER_AFTER_TOOLS_LOCAL`` for models with a
  reusable KV cache, the seed's synthesis for hosted models;
* greedy decoding on local models unless the user chose a temperature;
* on local models, the small-model policy (``desktop_app.core.local_policy``) and the
  repetition guard; hosted models get neither.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal

from desktop_app.core.agent.react import ReActAgent
from desktop_app.core.agent.tool_exec import Confirmer
from desktop_app.core.llm.base import LLM
from desktop_app.core.tools.base import ToolRegistry

if TYPE_CHECKING:
    from desktop_app.core.documents import DocumentLibrary

DEFAULT_TOOL_TIMEOUT = 120.0
#: Local models see every tool up to this many (measured: README, "Agent quality").
LOCAL_SELECTION_THRESHOLD = 24
AfterTools = Literal["synthesize", "continue"]
SynthesisStyle = Literal["separate", "shared_prefix", "conversation"]
#: Measured on the bundled 0.5B model (README, "Agent quality"). "continue" (the loop's own
#: next turn is the answer: first token 0.30 s after a 3-call run against 15.7 s
#: re-evaluated) scored the same with greedy decoding (2026-12-03: tool tasks 50/64 against
#: 49/64, no-tool 17/17 both), so the choice rests on answer quality, not yet compared
#: answer by answer.
ANSWER_AFTER_TOOLS_LOCAL: AfterTools = "synthesize"
#: "shared_prefix" continues the loop's own prompt, so llama.cpp's KV cache holds all of it
#: but the last instruction (first token 0.25 s after a 3-call run against 15.5 s
#: re-evaluated: benchmarks/first_token.py). Its first wording lost to "separate" on the
#: bundled 0.5B model (2026-12-03, greedy: 17/26 of the arithmetic, percentage, unit and
#: date tasks against 22/26; date answers became plans). With the instruction in
#: synthesis.CONTINUE_INSTRUCTION and no text-only grammar, the whole suite (2026-12-04,
#: same code, one after the other): tool tasks 48/64 against 49/64, no-tool 17/17 both,
#: 6.3 s against 7.0 s per task. A reply that is a call instead falls back to "separate"
#: (1 of 50 answers, with the wording "… in one short sentence": 47/64, 6.4 s per task).
SYNTHESIS_LOCAL: SynthesisStyle = "shared_prefix"
#: Greedy decoding for local models unless an assistant or chat sets a temperature.
#: llama-cpp-python's own default (0.2) let the bundled model say Mars was the largest
#: planet (1 time in 4) and count a spider's legs with the calculator; the full suite,
#: 2026-12-03: no-tool questions 17/17 greedy against 15/17 at 0.2, tool tasks 49/64 against
#: 48/64 (README, "Agent quality"). Retries of a failed commanded call still sample.
TEMPERATURE_LOCAL = 0.0


def answer_after_tools(llm: LLM) -> AfterTools:
    """Who writes the final answer once tools ran, for ``llm``."""
    return ANSWER_AFTER_TOOLS_LOCAL if llm.reuses_prompt_prefix else "synthesize"


async def warm_up(llm: LLM, tools: ToolRegistry, *, policy_lists: bool = True,
                  system_prompt: str | None = None) -> None:
    """Evaluate (or restore from disk) the system turn every run on ``llm`` starts with, so
    the first question only pays for its own tokens. A no-op for hosted models.
    ``policy_lists=False``: only the registry's own tool list (the policy's choice is not
    asked in runs over ``tools``); ``system_prompt``: an assistant's own."""
    warm = getattr(llm, "warm_up", None)
    if warm is None or not llm.reuses_prompt_prefix:
        return
    options: dict[str, Any] = {"system_prompt": system_prompt} if system_prompt else {}
    agent = make_agent(llm, tools, **options)
    native = agent.mode == "native"
    messages = agent._initial_messages("", (), tools, native)[:1]  # the system turn only
    if not (native and len(tools)):
        await warm(messages, None)
        return
    # The policy's first question offers a tool list of its own: its prompt state too.
    variants = (agent.policy.warm_tool_lists(tools)
                if agent.policy is not None and policy_lists else [])
    for specs in [tools.specs(), *variants]:
        await warm(messages, specs)


async def warm_up_documents(llm: LLM, tools: ToolRegistry, library: DocumentLibrary,
                            collections: Sequence[str], *,
                            system_prompt: str | None = None) -> None:
    """Prepare what the first question in a chat with ``collections`` attached needs: the
    embedding model, and the system turn of its tool list (``search_documents`` added),
    which the launch's warm-up does not cover (``benchmarks/first_answer.py --documents``).
    A no-op for a hosted model but for the embedding model."""
    from desktop_app.core.tools.builtin.search_documents import with_documents

    await asyncio.to_thread(lambda: library.embedder)
    registry = await asyncio.to_thread(with_documents, tools, library, collections)
    if len(registry) > len(tools):
        await warm_up(llm, registry, policy_lists=False, system_prompt=system_prompt)


#: Tool-loop turns for a local model. Every eval task needs at most five; the engine's 50
#: let the bundled model spend 388 s saving the same note again and again.
MAX_ITERATIONS_LOCAL = 12


def make_agent(llm: LLM, tools: ToolRegistry, *, confirm: Confirmer | None = None,
               **options: Any) -> ReActAgent:
    """A ``ReActAgent`` for ``llm`` with the app's defaults; ``options`` override them."""
    from desktop_app.core.context import ContextGuard
    from desktop_app.core.tools.sharing import gate_for

    options.setdefault("context_guard", ContextGuard(llm))
    # A model on another computer never gets the user's files or notes unasked: the gate
    # given for its host, or none at all (kept local) — every run kind, DAG steps included.
    options["share"] = gate_for(llm, options.get("share"))
    options.setdefault("tool_timeout", DEFAULT_TOOL_TIMEOUT)
    options.setdefault("after_tools", answer_after_tools(llm))
    options.setdefault("synthesis", SYNTHESIS_LOCAL if llm.reuses_prompt_prefix else "separate")
    if llm.reuses_prompt_prefix:
        # Choosing tools costs a model call and gives every question a different system
        # turn, so the cached state of the full tool list could never be reused.
        options.setdefault("selection_threshold", LOCAL_SELECTION_THRESHOLD)
        options.setdefault("max_iterations", MAX_ITERATIONS_LOCAL)
        options.setdefault("guard_repetition", True)
        if "policy" not in options:
            from desktop_app.core.local_policy import policy_for

            options["policy"] = policy_for(llm)
        if options.get("temperature") is None:
            options["temperature"] = TEMPERATURE_LOCAL
    return ReActAgent(llm, tools, confirm=confirm, **options)
