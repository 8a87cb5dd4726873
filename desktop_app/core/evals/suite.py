"""Evaluation suites: tasks with a prompt and a checkable expectation, loaded from JSON.

A suite file holds the tasks plus the world they run in: workspace files and notes every
task starts with (each task gets a fresh copy, so one task's side effects never help or hurt
another). The built-in suite is ``resources/eval/everyday.json``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError, field_validator

from desktop_app.core import paths
from desktop_app.core.errors import ConfigError

BUILTIN_SUITE = "everyday"
TARGETS = ("answer", "note", "file", "artifact")
Split = Literal["dev", "heldout"]
SPLITS: tuple[Split, ...] = ("dev", "heldout")
#: What of the suite's world a task may find: a fresh install has neither.
WorldPart = Literal["workspace", "notes"]


#: The tool that makes what a check reads: a note, a file, a chart or table artifact.
_MAKERS = {"note": "note_create", "file": "write_file", "chart": "make_chart",
           "table": "make_table"}


class EvalTask(BaseModel):
    """One task: a prompt, where to look for the result, and what it must be."""

    id: str
    category: str
    prompt: str
    #: False for questions a model should answer from its own knowledge: calling a tool
    #: there counts against it.
    needs_tool: bool = True
    #: Target ("answer", "note", "file", "artifact") → conditions (see ``checks``).
    expect: dict[str, dict[str, Any]]
    #: The answer must come from a tool (a guess could be right by luck, e.g. a weekday).
    tool_required: bool = False
    #: The chat has the suite's document collection ("Library") attached.
    documents: bool = False
    #: ``dev`` tasks are what the agent may be tuned on; ``heldout`` tasks never are.
    split: Split = "dev"
    #: "original", "reworded" (of the dev task ``of``), "near_miss" or "language".
    kind: str = "original"
    of: str | None = None
    language: str = "en"
    #: At least one of these tools must be called / none of these may be called.
    expect_tools: list[str] = Field(default_factory=list)
    forbid_tools: list[str] = Field(default_factory=list)
    #: The parts of the suite's world this task starts with (None: all of it).
    uses: list[WorldPart] | None = None
    #: A correct and a plausibly wrong result per target: the checks must pass the first
    #: and fail the second (tests/evals prove it for every task).
    reference: dict[str, Any] | None = None
    near_miss: dict[str, Any] | None = None

    def tools_right(self, called: list[str]) -> bool:
        """Whether the tools ``called`` were the right decision, whatever the answer then
        said: none for a question that needs none; for a tool task at least one, none of
        the forbidden ones, one of the expected ones, and the tool without which what the
        task checks (a note, a file, a chart, a table) cannot exist."""
        if not self.needs_tool:
            return not called
        if not called or set(called) & set(self.forbid_tools):
            return False
        if self.expect_tools and not set(called) & set(self.expect_tools):
            return False
        needed = {_MAKERS[kind] for target, spec in self.expect.items()
                  for kind in (target, *spec) if kind in _MAKERS}
        return needed <= set(called)

    @field_validator("expect")
    @classmethod
    def _known_targets(cls, value: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
        unknown = set(value) - set(TARGETS)
        if unknown or not value:
            raise ValueError(f"expect needs one of {', '.join(TARGETS)}; got {sorted(value)}")
        return value


class SeedNote(BaseModel):
    title: str
    body: str


class EvalSuite(BaseModel):
    """A named list of tasks and the workspace files and notes they start with."""

    name: str
    version: int = 1
    description: str = ""
    workspace: dict[str, str] = Field(default_factory=dict)
    notes: list[SeedNote] = Field(default_factory=list)
    #: Files of the document collection "Library" that ``documents`` tasks search (indexed
    #: once per run of the suite: the tasks only read it).
    library: dict[str, str] = Field(default_factory=dict)
    tasks: list[EvalTask]

    def categories(self) -> list[str]:
        """Categories in the order they first appear."""
        return list(dict.fromkeys(t.category for t in self.tasks))

    def select(self, categories: list[str] | None = None,
               task_ids: list[str] | None = None, *, split: Split | None = None,
               languages: list[str] | None = None) -> EvalSuite:
        """A copy with only the given categories, task ids, split and languages (None: all)."""
        tasks = [t for t in self.tasks
                 if (not categories or t.category in categories)
                 and (not task_ids or t.id in task_ids)
                 and (split is None or t.split == split)
                 and (not languages or t.language in languages)]
        if not tasks:
            known = ", ".join(self.categories())
            raise ConfigError("No task of the suite matches that selection.",
                              hint=f"Categories: {known}.")
        return self.model_copy(update={"tasks": tasks})


def builtin_suite_path() -> Path:
    return paths.resources_dir() / "eval" / f"{BUILTIN_SUITE}.json"


def builtin_heldout_path() -> Path:
    """The built-in suite's held-out tasks (same world, never tuned on)."""
    return paths.resources_dir() / "eval" / f"{BUILTIN_SUITE}-heldout.json"


def load_suite(path: str | Path | None = None) -> EvalSuite:
    """The suite in ``path`` (default: the built-in one, both splits); a clear error when
    it is broken. A suite file may list its held-out tasks itself (``"split": "heldout"``);
    the built-in suite keeps them in a file of their own."""
    if path:
        return _load_file(Path(path).expanduser())
    suite = _load_file(builtin_suite_path())
    heldout_file = builtin_heldout_path()
    if heldout_file.exists():
        extra = _read_json(heldout_file)
        tasks = extra.get("tasks", []) if isinstance(extra, dict) else extra
        merged = {**suite.model_dump(), "tasks": [
            *[t.model_dump() for t in suite.tasks],
            *[{**task, "split": "heldout"} for task in tasks]]}
        suite = _validated(merged, heldout_file)
    return suite


def _read_json(file: Path) -> Any:
    try:
        return json.loads(file.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"Cannot read the suite file {file}: {exc.strerror or exc}.",
                          hint="Check the path given with --suite.") from exc
    except ValueError as exc:
        raise ConfigError(f"The suite file {file} is not valid JSON: {exc}.",
                          hint="Fix the file; resources/eval/everyday.json shows the format.") from exc


def _load_file(file: Path) -> EvalSuite:
    return _validated(_read_json(file), file)


def _validated(data: Any, file: Path) -> EvalSuite:
    try:
        suite = EvalSuite.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise ConfigError(f"The suite file {file} is not a valid suite: {where}: {first['msg']}.",
                          hint="resources/eval/everyday.json shows the format.") from exc
    ids = [t.id for t in suite.tasks]
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    if duplicates:
        raise ConfigError(f"The suite file {file} repeats task ids: {', '.join(duplicates)}.",
                          hint="Give every task its own id.")
    return suite
