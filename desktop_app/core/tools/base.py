"""Tools the agent can call: ``Tool``, ``ToolResult`` (with artifacts) and ``ToolRegistry``."""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping
from typing import Any

import jsonschema
from pydantic import BaseModel, Field

from desktop_app.core.errors import ToolArgumentError, ToolNotFoundError

#: Mime types the UI previews in the web view (and the LLM only sees a summary of).
RICH_MIME_TYPES = frozenset({"text/html", "text/markdown"})


class Artifact(BaseModel):
    """A document a tool produced (an HTML report, a Markdown table...)."""

    name: str
    mime_type: str
    content: str

    @property
    def is_rich(self) -> bool:
        return self.mime_type in RICH_MIME_TYPES


class ToolResult(BaseModel):
    """What a tool returns: text for the model, or an error; optional artifacts."""

    text: str = ""
    error: str | None = None
    artifacts: list[Artifact] = Field(default_factory=list)
    #: A sentence or two for the user, written by the tool, for when this call is exactly
    #: what they asked for ("Make a table of …"): a small local model shown it as the
    #: answer instead of writing one (see ``agent/confirmation.py``).
    confirmation: str | None = None
    #: The user was asked and said no: nothing ran.
    declined: bool = False

    @property
    def ok(self) -> bool:
        return self.error is None

    @classmethod
    def failure(cls, message: str) -> ToolResult:
        return cls(error=message)


class Change(BaseModel):
    """What a call of a tool that changes something would do, in the user's words, shown
    when the user is asked to allow it."""

    summary: str
    #: It destroys what cannot be got back (a file's current content): the user is asked
    #: every time, even for a tool they chose to always allow.
    destroys: bool = False


#: A confirmation shows at most this much of what was saved; the rest is in the note/file.
CONFIRMATION_SHOWN_CHARS = 600


def _shown(text: str) -> str:
    text = text.strip()
    if len(text) <= CONFIRMATION_SHOWN_CHARS:
        return text
    return text[:CONFIRMATION_SHOWN_CHARS].rstrip() + " …"


def quoted(text: str) -> str:
    """``text`` as a Markdown quote, for a confirmation that shows what was saved."""
    return "\n".join(f"> {line}".rstrip() for line in _shown(text).splitlines()) or "> (empty)"


def fenced(text: str) -> str:
    """``text`` in a Markdown code block whose fence no line of it can close."""
    longest = max((len(run) for run in re.findall(r"`{3,}", text)), default=2)
    fence = "`" * (longest + 1)
    return f"{fence}\n{_shown(text)}\n{fence}"


class Tool(ABC):
    """A capability the model may use.

    ``description`` is one line (it goes into compact catalogs); ``parameters`` is a JSON
    schema of an object. ``read_only`` tools run without asking; tools that change anything
    set it False and the engine asks the user to confirm first.
    """

    name: str
    description: str
    #: Shared by every instance of the class, so never changed in place.
    parameters: Mapping[str, Any] = {"type": "object", "properties": {}}
    read_only: bool = True
    #: Running it only computes from its arguments: no side effects, no access to the
    #: user's data, cheap. A checker may run such a tool to test a call before it is made.
    pure: bool = False
    #: Its result holds the user's own content (files, notes): sending it to a model on
    #: another computer needs the user's consent (``core/tools/sharing.py``).
    reads_private: bool = False
    #: A sentence for the system turn when this tool is offered (what the model should know
    #: to use it well), or None. Tools that share one say the same words, said once.
    prompt_hint: str | None = None

    @abstractmethod
    async def run(self, args: dict[str, Any]) -> ToolResult:
        """Run with validated arguments. May raise; the engine turns errors into observations."""

    async def describe_change(self, args: dict[str, Any]) -> Change | None:
        """What running with ``args`` would change (validated arguments), for the question
        the user is asked before a tool that is not ``read_only`` runs; None: nothing
        more to say than the arguments."""
        return None

    async def named_in(self, text: str) -> list[dict[str, Any]]:
        """Arguments for reading, with this tool, what ``text`` names by its exact name (a
        file in the user's workspace, say); empty when it names nothing this tool reads.
        Found without any model, so a policy may fetch what a request points at."""
        return []

    async def unfounded(self, args: dict[str, Any], conversation: str) -> list[str]:
        """The optional arguments in ``args`` that nothing in ``conversation`` supports (a
        place the user never named, say): a reviewer of a model's call may leave them out,
        so the tool's default applies. Found without any model; none by default."""
        return []

    def validate(self, args: Any) -> dict[str, Any]:
        """Check ``args`` against ``parameters``; raise ``ToolArgumentError`` with the reason."""
        if not isinstance(args, dict):
            raise ToolArgumentError(
                f"Arguments for '{self.name}' must be a JSON object, got {type(args).__name__}.",
                hint=f"Call it with an object matching: {self.parameters}")
        exc = jsonschema.exceptions.best_match(self._schema_validator().iter_errors(args))
        if exc is not None:
            where = "/".join(str(p) for p in exc.absolute_path) or "arguments"
            raise ToolArgumentError(f"Invalid arguments for '{self.name}' at {where}: {exc.message}",
                                    hint=f"Expected schema: {self.parameters}") from exc
        return args

    def _schema_validator(self) -> Any:
        """A validator for ``parameters``, built (and the schema checked) once per schema:
        ``jsonschema.validate`` re-checks the schema on every call, ~1-15 ms, which would
        dominate the engine's per-iteration cost."""
        cached = self.__dict__.get("_cached_schema_validator")
        if cached is None or cached[0] is not self.parameters:
            cls = jsonschema.validators.validator_for(self.parameters)
            cls.check_schema(self.parameters)
            cached = (self.parameters, cls(self.parameters))
            self.__dict__["_cached_schema_validator"] = cached
        return cached[1]

    def spec(self) -> dict[str, Any]:
        """OpenAI function-calling spec."""
        return {"type": "function",
                "function": {"name": self.name, "description": self.description,
                             "parameters": self.parameters}}

    def catalog_line(self, width: int = 80) -> str:
        """``name: description`` cut to about ``width`` characters, for tool selection."""
        line = f"{self.name}: {self.description.splitlines()[0] if self.description else ''}"
        return line if len(line) <= width else line[: width - 1] + "…"


class FunctionTool(Tool):
    """A tool backed by an async function ``fn(**args) -> ToolResult | str``."""

    def __init__(self, name: str, description: str, parameters: dict[str, Any],
                 fn: Callable[..., Awaitable[ToolResult | str]], *, read_only: bool = True) -> None:
        self.name = name
        self.description = description
        self.parameters = parameters
        self.read_only = read_only
        self._fn = fn

    async def run(self, args: dict[str, Any]) -> ToolResult:
        result = await self._fn(**args)
        return result if isinstance(result, ToolResult) else ToolResult(text=str(result))


class ToolRegistry:
    """Named tools; a filtered copy serves a run after tool selection."""

    def __init__(self, tools: Iterable[Tool] = ()) -> None:
        self._tools: dict[str, Tool] = {}
        for tool in tools:
            self.register(tool)

    def register(self, tool: Tool) -> Tool:
        if tool.name in self._tools:
            raise ValueError(f"A tool named '{tool.name}' is already registered.")
        self._tools[tool.name] = tool
        return tool

    def unregister(self, name: str) -> None:
        self._tools.pop(name, None)

    def get(self, name: str) -> Tool:
        try:
            return self._tools[name]
        except KeyError:
            available = ", ".join(self._tools) or "none"
            raise ToolNotFoundError(f"Unknown tool '{name}'.",
                                    hint=f"Available tools: {available}.") from None

    def names(self) -> list[str]:
        return list(self._tools)

    def filtered(self, names: Iterable[str]) -> ToolRegistry:
        """A copy holding only the known tools among ``names``, in registry order."""
        wanted = set(names)
        return ToolRegistry(t for n, t in self._tools.items() if n in wanted)

    def catalog(self, width: int = 80) -> str:
        """One compact line per tool, no schemas."""
        return "\n".join(f"- {tool.catalog_line(width)}" for tool in self._tools.values())

    def specs(self) -> list[dict[str, Any]]:
        return [tool.spec() for tool in self._tools.values()]

    def __len__(self) -> int:
        return len(self._tools)

    def __iter__(self) -> Iterator[Tool]:
        return iter(list(self._tools.values()))

    def __contains__(self, name: object) -> bool:
        return name in self._tools
