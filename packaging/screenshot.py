"""Start the real app (offscreen, or on $DISPLAY e.g. under Xvfb) and save screenshots.

    python packaging/screenshot.py --out screenshots/            # scripted model (fast)
    python packaging/screenshot.py --out screenshots/ --real     # the bundled local model
    python packaging/screenshot.py artifacts/screenshot.png      # CI: the main shot there,
                                                                 # all shots next to it

Takes: the empty first launch, a conversation with a tool card + answer + footer, the
artifact pane showing an HTML artifact, the settings dialog, and (scripted run only) the
Compare window with a local and a hosted model side by side and a failing one, and a DAG
run with its plan, the steps' tool cards and the footer's speeds. All state
lives in a temporary app home, so the user's own conversations are never touched. Exits non-zero if
a screenshot is missing or blank. CI runs it and keeps the PNGs as artifacts of the run.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from desktop_app.ui.app import create_application  # noqa: E402

ANSWER = """**17.5 % of 2,340 is 409.5.**

The calculator evaluated `2340 * 0.175`. The same in Python:

```python
def percent_of(total: float, rate: float) -> float:
    \"\"\"rate in percent, e.g. 17.5\"\"\"
    return total * rate / 100

print(percent_of(2340, 17.5))  # 409.5
```

| value | result |
|------:|-------:|
| 2,340 | 409.5 |
"""

TABLE = ("<table><tr><th>Planet</th><th>Moons</th><th>Type</th></tr>"
         "<tr><td>Mercury</td><td>0</td><td>rocky</td></tr>"
         "<tr><td>Venus</td><td>0</td><td>rocky</td></tr>"
         "<tr><td>Earth</td><td>1</td><td>rocky</td></tr>"
         "<tr><td>Mars</td><td>2</td><td>rocky</td></tr>"
         "<tr><td>Jupiter</td><td>95</td><td>gas giant</td></tr>"
         "<tr><td>Saturn</td><td>146</td><td>gas giant</td></tr></table>"
         "<p style='color:#666'>Counts of confirmed moons.</p>"
         "<img src='http://127.0.0.1:9/tracker.png' alt='(remote image blocked)'>")


def _scripted_model():
    from desktop_app.core.llm.testing import ScriptedLLM, json_action, json_final

    return ScriptedLLM([
        json_action("calculator", {"expression": "2340 * 0.175"}, "percentage"),
        json_final("409.5"), ANSWER,
        json_action("create_html_artifact", {"title": "Planets", "body": TABLE}),
        json_final("done"),
        "Here is the table of planets and their moons; it is open in the preview pane.",
    ], model_id="qwen2.5-coder-0.5b", delay=0.05, chunk_size=3)


async def _compare_shot(window, scripted, grab, settle) -> None:
    """The Compare window after a scripted run: the local model (with a tool call), a
    hosted one, and one whose server is down (its error shown in its own column)."""
    from desktop_app.core.errors import LLMConnectionError
    from desktop_app.core.llm.registry import ModelEntry
    from desktop_app.core.llm.testing import ScriptedLLM, json_action, json_final

    scripted.add(json_action("calculator", {"expression": "2340 * 0.175"}, "percentage"),
                 json_final("409.5"), ANSWER)
    # Native tool calling: a direct answer streams from the loop's one call.
    hosted = ScriptedLLM(["**409.5** — that is 2,340 × 0.175."],
                         model_id="gpt-4o-mini", delay=0.03, chunk_size=4, tool_call=True)
    down = ScriptedLLM([LLMConnectionError(
        "The model server at http://127.0.0.1:11434/v1 could not be reached.",
        hint="Start the server (e.g. `ollama serve`) or check the base URL in Settings.")],
        model_id="llama3.1:8b")
    for name, llm in (("gpt-4o-mini", hosted), ("ollama-llama3.1", down)):
        window.ctx.registry.add(ModelEntry(name=name, kind="endpoint", factory=lambda m=llm: m,
                                           abilities=dict(llm.abilities), context_size=128_000))
    window.open_compare()
    compare = window.compare_window
    compare.resize(1280, 800)
    compare.prompt.setPlainText("What is 17.5% of 2,340?")
    compare.set_checked(window.ctx.registry.names())
    compare.run()
    await compare.wait_idle()
    await settle()
    grab(compare, "05-compare.png")
    compare.close()


async def _dag_shot(window, scripted, grab, settle) -> None:
    """A DAG run: the plan card with its steps, a step's tool card, the answer, the footer.
    The scripted model answers by request here (steps run in parallel, in any order)."""
    import json

    from desktop_app.core.llm.testing import json_action, json_final, tool_call_reply

    plan = json.dumps({"steps": [
        {"id": "step_1", "task": "Convert 10 miles to kilometres", "tool_hint": "convert_units"},
        {"id": "step_2", "task": "Convert 5 km to metres", "tool_hint": "convert_units"},
        {"id": "step_3", "task": "Add both distances in km",
         "dependencies": ["step_1", "step_2"]}]})
    analysis = json.dumps({"achieved": True, "confidence": 0.9, "reason": "both converted",
                           "final_answer": "21.09 km"})

    def brain(request):
        system, last = request.system_text, request.last_user_text
        tool_names = {t["function"]["name"] for t in request.tools or []}
        if "You are a planner" in system:
            return plan
        if "achieved" in system or "achieved" in last:
            return analysis
        if "select_tools" in tool_names:
            return tool_call_reply(("select_tools", {"tools": ["convert_units"]}))
        if request.kind == "stream" and not tool_names and "Step results" in last:
            return "**21.09 km** in total: 10 miles are 16.09 km, plus 5 km."
        # The stand-in model has no native tool calls: steps use JSON actions.
        done = any("convert_units" in m.content and m.role != "system"
                   for m in request.messages[2:])
        query = " ".join(m.content for m in request.messages if m.role == "user")
        if "10 miles to kilometres" in query and not done:
            return json_action("convert_units", {"value": 10, "from_unit": "mi",
                                                 "to_unit": "km"})
        if "5 km to metres" in query and not done:
            return json_action("convert_units", {"value": 5, "from_unit": "km", "to_unit": "m"})
        if "10 miles to kilometres" in query:
            return json_final("10 miles are 16.09 km.")
        if "5 km to metres" in query:
            return json_final("5 km are 5,000 m.")
        return json_final("16.09 km + 5 km = 21.09 km.")

    window.new_conversation()
    window.picker.mode.setCurrentIndex(window.picker.mode.findData("dag"))
    scripted._next_reply = brain  # answers by request from here on
    await window.send("Convert 10 miles and 5 km, then add both distances in km.")
    await window.controller.wait_idle()
    await settle(0.6)
    turn = window.chat.items()[-1]
    for card in turn.cards:
        card.set_expanded(False)
    if turn.plans:
        turn.plans[0].toggle_output("step_1")  # one step's output, opened from its row
    await settle()
    grab(window, "06-dag-run.png")
    window.picker.mode.setCurrentIndex(window.picker.mode.findData("react"))


async def _versions_shot(window, grab, settle) -> None:
    """An assistant chosen for a chat, and a question edited once: "‹ 2/2 ›"."""
    from desktop_app.core.llm.testing import ScriptedLLM
    from desktop_app.ui.message_widgets import UserMessage

    writer = ScriptedLLM([
        "Waves fold into foam,\nsalt wind carries gull voices,\nthe tide keeps its time.",
        "Grey harbour at dawn,\nropes creak against the bollards,\nboats breathe with the sea.",
    ], model_id="writer-demo", tool_call=True, delay=0.02, chunk_size=4)
    window.ctx.registry.register("writer-demo", writer)
    window.picker.set_registry(window.ctx.registry, "writer-demo")
    window.new_conversation()
    bar = window.assistant.picker
    bar.combo.setCurrentIndex(bar.combo.findData("Writer"))
    await window.send("Write a haiku about the sea.")
    await window.controller.wait_idle()
    question = next(w for w in window.chat.items() if isinstance(w, UserMessage))
    window._edit(question)
    window.composer.set_text("")  # as Send does when the edited text goes from the box
    await window.send("Write a haiku about a harbour at dawn.")
    await window.controller.wait_idle()
    await settle(0.8)
    grab(window, "09-versions-and-assistant.png")
    window.assistant.manage()
    await settle()
    editor = window.assistant.editor
    editor.list.setCurrentRow(1)
    await settle()
    grab(editor, "10-assistants.png")
    editor.reject()


def _is_blank(path: Path) -> bool:
    from PySide6.QtGui import QImage

    image = QImage(str(path))
    if image.isNull():
        return True
    colors = {image.pixel(x, y) for x in range(0, image.width(), 23)
              for y in range(0, image.height(), 23)}
    return len(colors) < 4


async def _take(app, out: Path, real: bool) -> list[Path]:
    from desktop_app.core.config.settings import Settings
    from desktop_app.core.llm.factory import build_registry
    from desktop_app.core.store.async_store import AsyncStore
    from desktop_app.ui.app import open_window
    from desktop_app.ui.app_context import AppContext

    settings = Settings()
    registry = build_registry(settings)
    scripted = None
    if not real:  # the scripted model stands in for the bundled one, under its name
        from desktop_app.core.llm.registry import ModelEntry, ModelRegistry

        scripted, bundled = _scripted_model(), registry.entry("qwen2.5-coder-0.5b")
        registry = ModelRegistry()
        # kind "local", not "bundled": a bundled entry would assemble the real GGUF first.
        registry.add(ModelEntry(name=bundled.name, kind="local", factory=lambda: scripted,
                                abilities=bundled.abilities, context_size=bundled.context_size,
                                roles=bundled.roles, description=bundled.description))
    ctx = AppContext(settings=settings, registry=registry, store=await AsyncStore.open(),
                     persist_settings=False)
    window = await open_window(app, ctx)
    window.resize(1280, 800)
    shots: list[Path] = []

    async def settle(seconds: float = 0.4) -> None:
        # Qt paints while the loop waits (qasync runs asyncio on Qt's loop). Processing
        # Qt's events from inside this task instead ran other tasks' steps within it:
        # qasync logged "Cannot enter into task … while another task … is being executed".
        await asyncio.sleep(seconds)

    def grab(widget, name: str) -> None:
        path = out / name
        # The artifact preview's web view comes out blank in these grabs (Chromium draws
        # it outside the widget tree); the UI tests check what it loads
        # (tests/ui/test_ui_artifact_sandbox.py).
        widget.grab().save(str(path))
        shots.append(path)

    await settle()
    grab(window, "01-first-launch.png")

    if real:
        window.controller.agent_options = {"max_iterations": 3, "max_tokens": 256,
                                           "synthesis_max_tokens": 160}
    await window.send("What is 17.5% of 2,340?" if not real else
                      "What is 17.5% of 2340? Use the calculator.")
    await window.controller.wait_idle()
    await settle()
    window.chat.items()[-1].cards[0].set_expanded(True) if window.chat.items()[-1].cards else None
    await settle()
    grab(window, "02-conversation.png")

    # On the bundled model: a command, answered with the tool's own confirmation.
    await window.send("Make an HTML table of the planets and their moons." if not real else
                      "Make a table of the first four planets and their order from the Sun.")
    await window.controller.wait_idle()
    for _ in range(100):  # the web view loads in its own processes
        page = window.artifact_pane.page
        title = page.title() if page is not None else ""
        if title == "Planets" or real and title and not title.startswith(("about:", "data:")):
            break
        await asyncio.sleep(0.1)
    await settle(2.0 if real else 1.0)
    grab(window, "03-artifact-pane.png")

    window.open_settings()
    await settle()
    window.settings_dialog.tabs.setCurrentIndex(0)
    window.settings_dialog.endpoints.add_button.click()
    editor = window.settings_dialog.endpoints
    index = editor.preset.findText("Ollama")
    editor.preset.setCurrentIndex(index)
    editor.preset.activated.emit(index)
    await settle()
    grab(window.settings_dialog, "04-settings.png")
    window.settings_dialog.reject()

    window.open_models()
    await settle(1.0)
    models = window.models_window
    if models.installed.rowCount():
        models.installed.selectRow(0)
    await settle()
    grab(models, "07-models.png")
    models.tabs.setCurrentWidget(models.recommended)
    await settle()
    grab(models, "08-models-recommended.png")
    models.close()

    if not real:  # the real run has only the bundled model: nothing to compare it with
        await _compare_shot(window, scripted, grab, settle)
        await _dag_shot(window, scripted, grab, settle)
        await _versions_shot(window, grab, settle)
        from screenshot_documents import documents_shots  # beside this script
        from screenshot_states import state_shots

        await documents_shots(window, grab, settle)
        await state_shots(window, scripted, grab, settle)
    window.close()
    await window.controller.wait_idle()
    await ctx.aclose()
    return shots


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("target", nargs="?", type=Path,
                        help="a .png path for the main screenshot (others go next to it)")
    parser.add_argument("--out", type=Path, default=Path("screenshots"))
    parser.add_argument("--real", action="store_true", help="use the bundled local model")
    args = parser.parse_args(argv)
    if args.target is not None and args.target.suffix.lower() == ".png":
        args.out = args.target.parent
    args.out.mkdir(parents=True, exist_ok=True)
    home = tempfile.mkdtemp(prefix="desktop-app-screens-")
    os.environ["DESKTOP_APP_HOME"] = home  # never touch the user's own state
    app = create_application([sys.argv[0]])
    from desktop_app.ui.event_loop import make_event_loop

    loop = make_event_loop(app)
    asyncio.set_event_loop(loop)
    try:
        shots = loop.run_until_complete(_take(app, args.out.resolve(), args.real))
    finally:
        loop.close()  # joins qasync's executor threads (else Qt aborts at exit)
    if args.target is not None and args.target.suffix.lower() == ".png" and shots:
        # The artifact-pane shot shows the most at once: tool card, answer, footer, preview.
        main_shot = next((p for p in shots if p.name.startswith("03")), shots[-1])
        shutil.copyfile(main_shot, args.target)
        shots.append(args.target.resolve())
    blank = [str(p) for p in shots if _is_blank(p)]
    print(json.dumps({"screenshots": [str(p) for p in shots], "blank": blank}, indent=2))
    return 1 if blank or not shots else 0


if __name__ == "__main__":
    raise SystemExit(main())
