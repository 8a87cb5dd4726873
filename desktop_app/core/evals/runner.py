"""Running a suite on a model: every task in a fresh scratch world, checked, measured.

Each task gets a new temporary folder with the suite's workspace files and notes; the
built-in tools are bound to it (files and notes never touch the user's own), tools that
change things are allowed without asking (nobody is there to answer, and all they can
change is the scratch folder), MCP servers are left out so runs are comparable. The run
itself goes through the same ``drive_run``/``DagRunner`` funnel as the window, so the
result is what a user would have seen.
"""

from __future__ import annotations

import asyncio
import re
import shutil
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from desktop_app.core.agent.events import (
    AnswerDelta,
    Done,
    Event,
    IterationDone,
    IterationStart,
)
from desktop_app.core.dag.events import DagStepProgress
from desktop_app.core.evals.answer_defects import answer_defect
from desktop_app.core.evals.artifact_checks import check_chart, check_table
from desktop_app.core.evals.checks import check_text
from desktop_app.core.evals.suite import EvalSuite, EvalTask
from desktop_app.core.llm.types import Usage
from desktop_app.core.tools.base import Change

if TYPE_CHECKING:
    from desktop_app.core.llm.base import LLM
    from desktop_app.core.llm.registry import ModelRegistry
    from desktop_app.core.tools.base import Artifact, ToolRegistry

Mode = Literal["react", "dag"]

#: How a task's tools came to be called: the model chose them, the small-model policy
#: routed at least one, or no tool ran.
Route = Literal["model", "policy", "none"]


@dataclass
class TaskResult:
    """What one task did and whether it passed."""

    task_id: str
    category: str
    needs_tool: bool
    passed: bool
    reason: str = ""
    tools: list[str] = field(default_factory=list)
    iterations: int = 0
    seconds: float = 0.0
    usage: Usage = field(default_factory=Usage)
    #: Seconds from the start to the first visible answer token (None: none was shown).
    first_token: float | None = None
    answer: str = ""
    error: str | None = None
    #: Each call as the model wrote it, for reading a failure ("calculator(26.2*1.6)").
    calls: list[str] = field(default_factory=list)
    split: str = "dev"
    kind: str = "original"
    language: str = "en"
    route: Route = "none"
    #: The tools called were the right ones for the task (``EvalTask.tools_right``), apart
    #: from whether the answer was: a small model routes better than it knows.
    tools_right: bool = False


@dataclass
class World:
    """The scratch folder one task runs in."""

    root: Path
    workspace: Path
    notes: Path
    artifacts: list[Artifact] = field(default_factory=list)
    #: The suite's indexed document collection and the collections this task attaches.
    library: Any = None
    documents: list[str] = field(default_factory=list)
    #: What the task's document searches returned (to check what the answer cites).
    observations: list[str] = field(default_factory=list)
    #: Successful calls as (tool, arguments), in order (what a chart or table was made of).
    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)

    def calls_of(self, tool: str) -> list[dict[str, Any]]:
        return [args for name, args in self.calls if name == tool]

    def note_texts(self) -> list[tuple[str, str]]:
        from desktop_app.core.tools.builtin.notes import NoteStore

        return [(n.title, f"{n.title}\n{n.body}") for n in NoteStore(self.notes).all()]


def make_world(suite: EvalSuite, parent: Path | None = None,
               task: EvalTask | None = None) -> World:
    """A fresh folder with the suite's workspace files and notes: the parts ``task`` uses
    (a fresh install's empty workspace and notes otherwise)."""
    from desktop_app.core.tools.builtin.notes import NoteStore

    uses = task.uses if task is not None and task.uses is not None else ["workspace", "notes"]
    root = Path(tempfile.mkdtemp(prefix="desktop-app-eval-", dir=parent))
    workspace, notes = root / "workspace", root / "notes"
    workspace.mkdir()
    notes.mkdir()
    files = suite.workspace if "workspace" in uses else {}
    for name, content in files.items():
        target = workspace / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content, encoding="utf-8")
    store = NoteStore(notes)
    for note in suite.notes if "notes" in uses else []:
        store.create(note.title, note.body)
    return World(root=root, workspace=workspace, notes=notes)


def world_tools(world: World) -> ToolRegistry:
    """The built-in tools as a user with a workspace folder has them, bound to ``world``."""
    from desktop_app.core.config.settings import Settings, ToolsSettings
    from desktop_app.core.tools.base import ToolRegistry
    from desktop_app.core.tools.builtin import default_tools
    from desktop_app.core.tools.builtin.notes import NoteStore

    settings = Settings(tools=ToolsSettings(workspace=str(world.workspace)))
    tools = ToolRegistry(default_tools(settings, notes=NoteStore(world.notes)))
    if world.documents and world.library is not None:
        from desktop_app.core.tools.builtin.search_documents import with_documents

        tools = with_documents(tools, world.library, world.documents)
    return tools


#: Indexed suite libraries by content, for the whole process (indexing takes seconds and
#: the tasks never change a document).
_LIBRARIES: dict[int, Any] = {}
LIBRARY_COLLECTION = "Library"


def suite_library(suite: EvalSuite) -> Any:
    """The suite's ``library`` files indexed as the collection "Library"."""
    from desktop_app.core.documents import DocumentLibrary

    key = hash(tuple(sorted(suite.library.items())))
    if key not in _LIBRARIES:
        root = Path(tempfile.mkdtemp(prefix="desktop-app-eval-library-"))
        for name, content in suite.library.items():
            target = root / "files" / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(content, encoding="utf-8")
        library = DocumentLibrary(root / "documents.db")
        library.add_paths(LIBRARY_COLLECTION, [root / "files"])
        library.sync(LIBRARY_COLLECTION)
        _LIBRARIES[key] = library
    return _LIBRARIES[key]


async def _allow(_tool: str, _args: dict[str, Any], _change: Change | None) -> bool:
    return True


def judge(task: EvalTask, answer: str, tools: list[str], world: World,
          error: str | None) -> tuple[bool, str]:
    """(passed, reason) for one finished task."""
    if error:
        return False, f"error: {error}"
    if not task.needs_tool and tools:
        return False, f"called {', '.join(tools)} for a question that needs no tool"
    if task.tool_required and not tools:
        return False, "answered without a tool (a guess)"
    forbidden = sorted(set(tools) & set(task.forbid_tools))
    if forbidden:
        return False, f"called {', '.join(forbidden)}, which this request does not need"
    if task.expect_tools and not set(tools) & set(task.expect_tools):
        return False, f"did not call {' or '.join(task.expect_tools)}"
    defect = answer_defect(answer, task.prompt, made_document=bool(world.artifacts))
    if defect:
        return False, defect
    for target, spec in task.expect.items():
        reason = _judge_target(target, spec, task, answer, world)
        if reason:
            return False, f"{target}: {reason}"
    return True, ""


def _judge_target(target: str, spec: dict[str, Any], task: EvalTask, answer: str,
                  world: World) -> str | None:
    conditions = {k: v for k, v in spec.items() if k not in ("title", "path", "chart", "table")}
    if task.language != "en":
        conditions.setdefault("decimal_comma", True)
    if target == "answer":
        source = conditions.pop("cites", None)
        reason = check_text(answer, conditions, prompt=task.prompt)
        return reason or (_check_cited(answer, world.observations, source) if source else None)
    if target == "note":
        wanted = str(spec.get("title", "")).lower()
        notes = [text for title, text in world.note_texts() if wanted in title.lower()]
        if not notes:
            return f"no note titled like {spec.get('title')!r}"
        reasons = [check_text(text, conditions, prompt=task.prompt) for text in notes]
        return None if None in reasons else reasons[0]
    if target == "file":
        path = world.workspace / str(spec["path"])
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return f"{spec['path']} was not written"
        return check_text(text, conditions, prompt=task.prompt)
    if "chart" in spec:
        reason = check_chart(world.calls_of("make_chart"), spec["chart"])
        if reason:
            return reason
    if "table" in spec:
        reason = check_table(world.calls_of("make_table"), spec["table"])
        if reason:
            return reason
    if not world.artifacts:
        return "no document was made"
    if not conditions or conditions == {"decimal_comma": True}:
        return None
    reasons = [check_text(a.content, conditions, prompt=task.prompt) for a in world.artifacts]
    return None if None in reasons else reasons[-1]


def _check_cited(answer: str, observations: list[str], source: str) -> str | None:
    """The answer cites, as [n], a passage of the file ``source`` (a citation of another
    passage, or a number no search returned, does not count)."""
    from desktop_app.core.documents.citations import parse_passages

    passages = parse_passages(observations)
    cited = {int(n) for n in re.findall(r"\[(\d{1,4})\]", answer)}
    if not cited:
        return "no citation: the answer does not cite a passage as [n]"
    if not any(n in passages and passages[n].relative_path.endswith(source) for n in cited):
        return f"cites {sorted(cited)}, none of them a passage of {source}"
    return None


RunTask = Callable[[EvalTask, World, Callable[[Event], Awaitable[None]]], Awaitable[Any]]


#: A task still running after this many seconds is stopped and fails: one pathological
#: answer (a table repeated until the context was full) held a whole run for 12 minutes.
TASK_SECONDS = 300.0


async def run_task(task: EvalTask, suite: EvalSuite, run: RunTask,
                   limit: float = TASK_SECONDS) -> TaskResult:
    """Run one task in a fresh world with ``run(task, world, emit)``, then judge it; a run
    longer than ``limit`` seconds is stopped and fails with that reason."""
    world = make_world(suite, task=task)
    if task.documents and suite.library:
        world.library = await asyncio.to_thread(suite_library, suite)
        world.documents = [LIBRARY_COLLECTION]
    tools_called: list[str] = []
    origins: set[str] = set()
    shown_calls: list[str] = []
    pending: dict[str, tuple[str, Any]] = {}
    answer_parts: list[str] = []
    done: Done | None = None
    started = time.perf_counter()
    first_token: float | None = None

    async def emit(event: Event) -> None:
        nonlocal done, first_token
        if isinstance(event, IterationStart):
            tools_called.append(event.tool_name)
            shown_calls.append(f"{event.tool_name}({_short(event.tool_args)})")
            origins.add(event.origin)
            pending[event.call_id or event.tool_name] = (event.tool_name, event.tool_args)
        elif isinstance(event, IterationDone):
            if event.tool_name == "search_documents":
                world.observations.append(event.observation)
            _record_call(world, pending.pop(event.call_id or event.tool_name, None), event.error)
        elif isinstance(event, DagStepProgress):  # a step's own events arrive wrapped
            data = event.data
            if data.get("type") == "iteration" and data.get("status") == "start":
                tools_called.append(str(data.get("tool_name")))
                origins.add(str(data.get("origin") or "model"))
                world.calls.append((str(data.get("tool_name")), data.get("tool_args") or {}))
            if data.get("type") == "iteration" and data.get("status") == "done":
                from desktop_app.core.tools.base import Artifact

                world.artifacts.extend(Artifact.model_validate(a)
                                       for a in data.get("artifacts") or [])
        elif isinstance(event, AnswerDelta):
            if first_token is None and event.content.strip():
                first_token = time.perf_counter() - started
            answer_parts.append(event.content)
        elif isinstance(event, Done):
            done = event
        artifacts = getattr(event, "artifacts", None)
        if artifacts:
            world.artifacts.extend(artifacts)

    try:
        timed_out = False
        try:
            await asyncio.wait_for(run(task, world, emit), limit)
        except TimeoutError:
            timed_out = True
        seconds = time.perf_counter() - started
        answer = done.answer if done is not None else "".join(answer_parts)
        error = done.error if done is not None else "the run ended without a result"
        passed, reason = judge(task, answer, tools_called, world, error)
        if timed_out:
            error = f"stopped after {limit:.0f} s (the task's time limit)"
            passed, reason = False, error
        route: Route = ("none" if not tools_called
                        else "policy" if "policy" in origins else "model")
        return TaskResult(task_id=task.id, category=task.category, needs_tool=task.needs_tool,
                          passed=passed, reason=reason, tools=tools_called,
                          iterations=done.iterations if done else 0, seconds=seconds,
                          usage=done.usage if done else Usage(), first_token=first_token,
                          answer=answer, error=error, split=task.split, kind=task.kind,
                          language=task.language, route=route, calls=shown_calls,
                          tools_right=task.tools_right(tools_called))
    finally:
        shutil.rmtree(world.root, ignore_errors=True)


def _short(args: Any, limit: int = 80) -> str:
    import json

    text = args if isinstance(args, str) else json.dumps(args, ensure_ascii=False)
    return text if len(text) <= limit else text[:limit - 1] + "…"


def _record_call(world: World, started: tuple[str, Any] | None, error: str | None) -> None:
    """Keep a finished call's arguments when it succeeded (decoded if they came as text)."""
    import json

    if started is None or error:
        return
    tool, args = started
    if isinstance(args, str):
        try:
            args = json.loads(args)
        except ValueError:
            return
    if isinstance(args, dict):
        world.calls.append((tool, args))


def react_runner(llm: LLM, **agent_options: Any) -> RunTask:
    """Tasks as ReAct runs on ``llm`` (the window's default mode)."""
    from desktop_app.core.agent.factory import make_agent
    from desktop_app.core.agent.runner import drive_run

    async def run(task: EvalTask, world: World,
                  emit: Callable[[Event], Awaitable[None]]) -> None:
        agent = make_agent(llm, world_tools(world), confirm=_allow, **agent_options)
        await drive_run(agent, task.prompt, emit=emit)

    return run


def dag_runner(registry: ModelRegistry, model: str | None = None,
               **agent_options: Any) -> RunTask:
    """Tasks as DAG-mode runs (plan, steps, analysis) with ``model`` planning."""
    from desktop_app.core.dag.runner import DagRunner

    async def run(task: EvalTask, world: World,
                  emit: Callable[[Event], Awaitable[None]]) -> None:
        runner = DagRunner(registry, world_tools(world), model=model,
                           agent_options={"confirm": _allow, **agent_options})
        await runner.run(task.prompt, on_event=emit)

    return run


async def run_suite(suite: EvalSuite, run: RunTask, *,
                    on_result: Callable[[TaskResult], Any] | None = None) -> list[TaskResult]:
    """Every task of ``suite`` one after another (a local model has one CPU to give)."""
    results = []
    for task in suite.tasks:
        result = await run_task(task, suite, run)
        results.append(result)
        if on_result is not None:
            outcome = on_result(result)
            if asyncio.iscoroutine(outcome):
                await outcome
    return results
