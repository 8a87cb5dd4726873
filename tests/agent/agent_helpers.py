"""Small real tools and recorders for the agent tests (imported by the test modules)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from desktop_app.core.agent.events import Event
from desktop_app.core.llm.types import ChatMessage, Usage
from desktop_app.core.tools.base import Artifact, FunctionTool, Tool, ToolRegistry, ToolResult
from desktop_app.core.tools.builtin import CalculatorTool, ClockTool, HtmlArtifactTool


class Recorder:
    """An event sink that keeps every event."""

    def __init__(self) -> None:
        self.events: list[Event] = []

    def __call__(self, event: Event) -> None:
        self.events.append(event)

    def kinds(self) -> list[str]:
        """Compact labels: 'thinking:start:1', 'iteration:done:calculator', 'answer:delta'..."""
        out = []
        for e in self.events:
            data = e.payload()
            label = e.channel
            if "type" in data:
                label = data["type"]
            if label == "answer" and e.channel == "step":
                label = "signal"  # AnswerSignal: the loop's final_answer, not synthesis
            elif "status" in data:
                label += f":{data['status']}"
            if label.startswith(("thinking", "iteration")):
                label += f":{data['iteration']}"
            if label.startswith("iteration"):
                label += f":{data['tool_name']}"
            out.append(label)
        return out

    def of(self, cls: type[Event]) -> list[Any]:
        return [e for e in self.events if isinstance(e, cls)]


def echo_tool(name: str = "echo", *, delay: float = 0.0, read_only: bool = True) -> Tool:
    async def run(text: str) -> ToolResult:
        if delay:
            await asyncio.sleep(delay)
        return ToolResult(text=f"{name}: {text}")

    return FunctionTool(name, f"Echo text back ({name})",
                        {"type": "object", "properties": {"text": {"type": "string"}},
                         "required": ["text"]}, run, read_only=read_only)


def failing_tool(name: str = "boom") -> Tool:
    async def run(**_: Any) -> ToolResult:
        raise RuntimeError("kaboom")

    return FunctionTool(name, "Always raises", {"type": "object", "properties": {}}, run)


def html_tool() -> Tool:
    async def run(title: str) -> ToolResult:
        return ToolResult(text="made a page", artifacts=[Artifact(
            name="report.html", mime_type="text/html",
            content=f"<html><body><h1>{title}</h1><p>SECRET-SOURCE</p></body></html>")])

    return FunctionTool("make_page", "Make an HTML page",
                        {"type": "object", "properties": {"title": {"type": "string"}},
                         "required": ["title"]}, run)


def registry(*tools: Tool, builtin: bool = True) -> ToolRegistry:
    """The three basic built-in tools (not ``default_tools()``, which grows) plus ``tools``."""
    basic: list[Tool] = [CalculatorTool(), ClockTool(), HtmlArtifactTool()] if builtin else []
    return ToolRegistry([*basic, *tools])


def many_tools(count: int) -> list[Tool]:
    return [echo_tool(f"tool_{i:02d}") for i in range(count)]


@dataclass
class FakeCompaction:
    messages: list[ChatMessage]
    compacted: bool
    original_count: int
    kept_count: int
    usage: Usage = field(default_factory=Usage)


class FakeGuard:
    """Keeps the system prompt and the last ``keep`` messages once over ``limit`` messages."""

    def __init__(self, limit: int = 1000, keep: int = 2, usage: Usage | None = None) -> None:
        self.limit, self.keep = limit, keep
        self.calls: list[tuple[int, int, str, bool]] = []
        self.usage = usage or Usage()

    def budget_for(self, llm: Any) -> int:
        return 4242

    async def check_and_compact(self, messages: list[ChatMessage], budget: int,
                                hint: str = "react_iteration", *,
                                force: bool = False) -> FakeCompaction:
        self.calls.append((len(messages), budget, hint, force))
        if force or len(messages) > self.limit:
            kept = [messages[0], *[m for m in messages[1:-self.keep] if m.pinned],
                    *messages[-self.keep:]]
            return FakeCompaction(kept, True, len(messages), len(kept), self.usage)
        return FakeCompaction(list(messages), False, len(messages), len(messages))
