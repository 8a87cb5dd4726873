"""Tool selection: with many tools, one cheap call picks the few a query needs (SPEC §4).

Above ``TOOL_SELECTION_THRESHOLD`` tools, a ``structured_llm_call`` sees a compact catalog
(about 80 characters a tool, no schemas) and returns ``{"tools": [...]}``; at most
``_TOOL_SELECTION_MAX`` known names are kept. Selection never breaks a run: unparseable
output, only unknown names, or any exception falls back to the full tool set.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from typing import Any

from desktop_app.core.llm.base import LLM
from desktop_app.core.llm.structured import StructuredOutputError, structured_llm_call
from desktop_app.core.llm.types import ChatMessage, Usage
from desktop_app.core.tools.base import ToolRegistry

log = logging.getLogger(__name__)

TOOL_SELECTION_THRESHOLD = 12
_TOOL_SELECTION_MAX = 6

SELECTION_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"tools": {"type": "array", "items": {"type": "string"},
                             "description": "names of the tools the request needs"}},
    "required": ["tools"],
}

SELECTION_PROMPT = """\
You choose which tools an assistant should have for the user's request. Pick at most \
{limit} tool names from this catalog, the most useful first, and only names that appear in \
it. Pick none if the request needs no tool.

Tools:
{catalog}

Answer with JSON: {{"tools": ["tool_name", ...]}}"""


@dataclass
class SelectionOutcome:
    """The registry to run with, the chosen names (None on fallback) and the cost."""

    registry: ToolRegistry
    selected: list[str] | None
    usage: Usage = field(default_factory=Usage)
    llm_calls: int = 0
    fallback_reason: str | None = None


def needs_selection(registry: ToolRegistry, threshold: int = TOOL_SELECTION_THRESHOLD) -> bool:
    return len(registry) > threshold


def _match_names(names: list[Any], registry: ToolRegistry) -> list[str]:
    """Known tool names among ``names`` (case-insensitive), deduplicated, in given order."""
    by_lower = {name.lower(): name for name in registry.names()}
    chosen: list[str] = []
    for raw in names:
        if not isinstance(raw, str):
            continue
        name = by_lower.get(raw.strip().lower())
        if name and name not in chosen:
            chosen.append(name)
    return chosen


async def select_tools(llm: LLM, registry: ToolRegistry, query: str, *,
                       limit: int = _TOOL_SELECTION_MAX,
                       temperature: float | None = None) -> SelectionOutcome:
    """Pick the tools ``query`` needs; fall back to ``registry`` itself on any failure."""
    messages = [ChatMessage.system(SELECTION_PROMPT.format(limit=limit,
                                                           catalog=registry.catalog(80))),
                ChatMessage.user(query)]
    try:
        result = await structured_llm_call(llm, messages, SELECTION_SCHEMA,
                                           function_name="select_tools",
                                           function_description="Choose the tools to use.",
                                           temperature=temperature, max_tokens=200)
    except asyncio.CancelledError:
        raise
    except StructuredOutputError as exc:
        log.info("tool selection failed, using all %d tools: %s", len(registry), exc)
        return SelectionOutcome(registry, None, exc.usage, exc.llm_calls,
                                fallback_reason=f"unparseable selection: {exc.message}")
    except Exception as exc:  # noqa: BLE001 - selection is optional: all tools
        log.info("tool selection raised, using all %d tools: %s", len(registry), exc)
        return SelectionOutcome(registry, None, fallback_reason=f"selection failed: {exc}")
    chosen = _match_names(result.value.get("tools", []), registry)[:limit]
    if not chosen:
        return SelectionOutcome(registry, None, result.usage, result.llm_calls,
                                fallback_reason="no valid tool names selected")
    return SelectionOutcome(registry.filtered(chosen), chosen, result.usage, result.llm_calls)
