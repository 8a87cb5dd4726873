"""Does the bundled model follow an assistant's instructions? The shipped Translator on
eight requests its prompt was chosen on and eight it never saw (is the answer still the
English sentence?), and a custom assistant told to start every answer with "Arr" on eight
questions, two of which use the calculator; each run through ``make_agent`` as the window
runs it. "before": the Translator's earlier prompt, and the answer written without the
assistant's instructions (``ReActAgent._own`` bypassed), in the same process.

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
#: Sentences never used while choosing the Translator's prompt (the ones above were).
HELD_OUT = [
    "Into Italian: The museum opens at nine.",
    "Translate to French: I lost my keys.",
    "German please: Where can I buy a ticket?",
    "Into Spanish: We are going to the beach tomorrow.",
    "French: This soup is too hot.",
    "Into German: My sister is a doctor.",
    "Spanish please: How much does this cost?",
    "Into French: The children are playing in the garden.",
]
ARR = "Start every answer with the word Arr."
EARLIER_TRANSLATOR = ("You are a translator. Translate the user's text into the language they "
                      "ask for (English if they do not say). Keep the meaning, tone and "
                      "formatting; answer with the translation only.")


def translated(request: str, answer: str) -> bool:
    """Not the English sentence again: fewer than half its longer words are in the answer."""
    source = request.split(":", 1)[1]
    words = [w.strip(".,?!").lower() for w in source.split() if len(w.strip(".,?!")) > 3]
    kept = sum(1 for w in words if w in answer.lower())
    return bool(answer.strip()) and kept * 2 < max(len(words), 1)
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


async def _score(llm, tools, translator) -> tuple[int, int, int]:
    from desktop_app.core.assistants import tools_for

    dev = held = 0
    for question, _words in TRANSLATIONS:
        answer = await _answer(llm, tools_for(translator, tools), translator.system_prompt,
                               question)
        dev += translated(question, answer)
    for question in HELD_OUT:
        answer = await _answer(llm, tools_for(translator, tools), translator.system_prompt,
                               question)
        held += translated(question, answer)
    arr = 0
    for question in QUESTIONS:
        answer = await _answer(llm, tools, ARR, question)
        arr += answer.lower().startswith("arr")
    return dev, held, arr


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
        before = await _score(llm, tools, translator.model_copy(
            update={"system_prompt": EARLIER_TRANSLATOR}))
    finally:
        ReActAgent._own = own  # type: ignore[method-assign]
    await llm.aclose()
    print(f"{'':34}{'now':>8}{'before':>8}")
    print(f"{'Translator, dev: translated':34}{now[0]:>6}/8{before[0]:>6}/8")
    print(f"{'Translator, held-out: translated':34}{now[1]:>6}/8{before[1]:>6}/8")
    print(f"{'Arr assistant: began Arr':34}{now[2]:>6}/8{before[2]:>6}/8")
    print(f"({time.perf_counter() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
