"""search_documents in DAG mode: a plan's step searches the attached collection."""

from __future__ import annotations

import asyncio

from desktop_app.core.dag.events import DagStepProgress
from desktop_app.core.dag.executor import DAGExecutor
from desktop_app.core.dag.plan import validate_plan
from desktop_app.core.llm.registry import ModelRegistry
from desktop_app.core.llm.testing import ScriptedLLM, json_action, json_final
from desktop_app.core.tools.builtin.search_documents import with_documents


def test_a_plan_step_searches_the_documents(library, tmp_path) -> None:
    folder = tmp_path / "home"
    folder.mkdir()
    (folder / "washer.md").write_text("# Warranty\n\nThe washer is covered for 24 months.\n")
    library.add_paths("Home", [folder])
    library.sync("Home")
    model = ScriptedLLM(model_id="m")
    model.add(json_action("search_documents", {"query": "washer warranty"}),
              json_final("24 months [1]"))
    registry = ModelRegistry()
    registry.register("m", model, default=True)
    plan = validate_plan({"steps": [{"id": "step_1", "task": "find the washer's warranty",
                                     "tool_hint": "search_documents"}]})
    events: list = []
    result = asyncio.run(DAGExecutor(registry, with_documents([], library, ["Home"])).execute(
        plan, "warranty", on_event=events.append))
    assert result.runs["step_1"].result == "24 months [1]"
    observations = [e.data["observation"] for e in events if isinstance(e, DagStepProgress)
                    and e.data.get("type") == "iteration" and e.data.get("status") == "done"]
    assert observations[0].startswith("[1] Home/washer.md › Warranty\nThe washer is covered")
