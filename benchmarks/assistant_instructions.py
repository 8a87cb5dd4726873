"""Does the bundled model follow an assistant's instructions? The shipped Translator on
eight requests (is the key word of the translation there?) and a custom assistant told to
start every answer with "Arr" on eight questions, two of which use the calculator; each
run through ``make_agent`` as the window runs it, with the instructions reaching the
answer-writing call (now) and without (before the fix, ``ReActAgent._own`` bypassed), in
the same process.

    .venv/bin/python benchmarks/assistant_instructions.py

About 5 minutes on 2 cores.
"""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

TRANSLATIONS = [
    ("Into French please: I would like two coffees and the bill.", ("caf",)),
    ("Into French: Where is the train station?", ("gare",)),
    ("Into Spanish: The cat is sleeping on the sofa.", ("gato",)),
    ("Into German: I am very hungry.", ("hunger",)),
    ("French please: Good night, see you tomorrow.", ("demain",)),
    ("Into Spanish: Thank you very much for your help.", ("gracias",)),
    ("Into German: The weather is nice today.", ("wetter",)),
    ("Into French: My brother lives in Paris.", ("frère", "frere")),
]
ARR = "Start every answer with the word Arr."
QUESTIONS = ["What is the capital of France?", "Name a primary colour.",
             "How many legs does a spider have?", "What is 6 times 7?",
             "Who wrote Romeo and Juliet?", "What is the boiling point of water in Celsius?",
             "Give me a synonym for happy.", "What is 15% of 80?"]


async def _answer(llm, tools, prompt: str, question: str) -> str:
    from desktop_app.core.agent.factory import make_agent
    from desktop_app.core.agent.runner import drive_run

    agent = make_agent(llm, tools, system_prompt=prompt, confirm=None)
    outcome = await drive_run(agent, question, emit=lambda _event: None)
    return outcome.answer.strip()


async def _score(llm, tools, translator) -> tuple[int, int]:
    from desktop_app.core.assistants import tools_for

    translated = 0
    for question, words in TRANSLATIONS:
        answer = (await _answer(llm, tools_for(translator, tools), translator.system_prompt,
                                question)).lower()
        translated += any(word in answer for word in words)
    arr = 0
    for question in QUESTIONS:
        answer = await _answer(llm, tools, ARR, question)
        arr += answer.lower().startswith("arr")
    return translated, arr


async def main() -> int:
    from desktop_app.core.agent.react import ReActAgent
    from desktop_app.core.assistants import all_assistants
    from desktop_app.core.config.settings import Settings
    from desktop_app.core.llm.bundled import ensure_bundled_model
    from desktop_app.core.llm.llama_cpp_adapter import LlamaCppLLM
    from desktop_app.core.tools.builtin import default_tools

    settings = Settings()
    translator = next(a for a in all_assistants(settings) if a.name == "Translator")
    llm = LlamaCppLLM(ensure_bundled_model(), context_size=4096)
    tools = default_tools(settings)
    started = time.perf_counter()
    now = await _score(llm, tools, translator)
    own = ReActAgent._own
    ReActAgent._own = lambda self, prompt: prompt  # type: ignore[method-assign]
    try:
        before = await _score(llm, tools, translator)
    finally:
        ReActAgent._own = own  # type: ignore[method-assign]
    await llm.aclose()
    print(f"{'':28}{'now':>8}{'before':>8}")
    print(f"{'Translator: translated':28}{now[0]:>6}/8{before[0]:>6}/8")
    print(f"{'Arr assistant: began Arr':28}{now[1]:>6}/8{before[1]:>6}/8")
    print(f"({time.perf_counter() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
