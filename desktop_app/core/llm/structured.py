"""``structured_llm_call``: the one entry point for schema-shaped model output (SPEC §3).

Three levels, tried in order as the model's abilities allow:

1. native function calling (``abilities["tool_call"]``): one function whose parameters are
   the schema, forced with ``tool_choice``; the arguments are the value. 1 call.
2. JSON mode (``abilities["json_mode"]``): ``response_format={"type": "json_object"}`` (with
   the schema for models that can constrain decoding to it); one reformat retry. 2 calls.
3. plain text: ``extract_json`` on the answer, then ``regex_fallback``; one reformat retry.
   2 calls.

So at most 5 / 4 / 2 calls. Every candidate is validated against the schema (a pydantic
model or a JSON schema); ``{}`` never counts as success. On total failure the caller gets
``default_value`` if it gave one, else a ``StructuredOutputError`` saying which levels were
tried and why each failed. Errors another level cannot fix (connection, auth, timeout, rate
limit, context overflow) are raised at once instead of burning the remaining calls.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

import jsonschema
from pydantic import BaseModel, ValidationError

from desktop_app.core.errors import (
    ContextOverflowError,
    LLMAuthError,
    LLMBadOutputError,
    LLMConnectionError,
    LLMError,
    LLMModelNotFoundError,
    LLMRateLimitError,
    LLMTimeoutError,
    ModelFileError,
)
from desktop_app.core.llm.base import LLM
from desktop_app.core.llm.json_extract import extract_json, loads_lenient
from desktop_app.core.llm.types import ChatMessage, Usage

__all__ = [
    "LEVEL_NAMES",
    "REFORMAT_PROMPT",
    "StructuredCallResult",
    "StructuredOutputError",
    "accepts_response_schema",
    "structured_llm_call",
]

T = TypeVar("T")


class _Unset:
    def __repr__(self) -> str:
        return "<unset>"


_UNSET: Any = _Unset()

LEVEL_NAMES = {1: "native function calling", 2: "JSON mode", 3: "plain text"}

REFORMAT_PROMPT = (
    "Your previous response could not be parsed as valid JSON matching the required schema"
    " ({reason}). Respond again with ONLY one JSON object that matches this schema, with no"
    " prose and no code fences:\n{schema}"
)

_INSTRUCTION = (
    "Respond with ONLY one JSON object (no prose, no code fences) that matches this JSON"
    " schema:\n{schema}"
)

#: Errors that another level or a retry cannot fix: raise them at once.
_TERMINAL_ERRORS: tuple[type[LLMError], ...] = (
    LLMConnectionError, LLMAuthError, LLMTimeoutError, LLMRateLimitError,
    LLMModelNotFoundError, ContextOverflowError, ModelFileError,
)


@dataclass
class StructuredCallResult(Generic[T]):
    """The validated value, the raw dict it came from, the level that produced it (1-3;
    0 means ``default_value`` was used), the number of LLM calls and their summed usage."""

    value: T
    raw: dict[str, Any] | None
    level_used: int
    llm_calls: int
    usage: Usage = field(default_factory=Usage)
    failures: list[str] = field(default_factory=list)

    @property
    def used_default(self) -> bool:
        return self.level_used == 0


class StructuredOutputError(LLMBadOutputError):
    """No level produced a valid value. ``failures`` lists each attempt and why it failed;
    ``usage``/``llm_calls`` let callers account for the tokens spent anyway."""

    def __init__(self, message: str, *, failures: list[str], usage: Usage, llm_calls: int,
                 hint: str | None = None) -> None:
        super().__init__(message, hint=hint)
        self.failures = failures
        self.usage = usage
        self.llm_calls = llm_calls


class _Validator:
    """Validates candidate dicts against a pydantic model class or a JSON-schema dict."""

    def __init__(self, schema: type[BaseModel] | dict[str, Any],
                 parse_fn: Callable[[dict[str, Any]], Any] | None) -> None:
        self.model: type[BaseModel] | None = None
        if isinstance(schema, type) and issubclass(schema, BaseModel):
            self.model = schema
            self.json_schema: dict[str, Any] = schema.model_json_schema()
        elif isinstance(schema, dict):
            jsonschema.Draft202012Validator.check_schema(schema)
            self.json_schema = schema
            self._validator = jsonschema.Draft202012Validator(schema)
        else:
            raise TypeError("schema must be a pydantic model class or a JSON schema dict")
        self.parse_fn = parse_fn
        self.schema_text = json.dumps(self.json_schema, ensure_ascii=False)

    def __call__(self, raw: Any) -> Any:
        """The value for ``raw``; raises ``ValueError`` saying what is wrong."""
        if not isinstance(raw, dict):
            # The model's output, not the caller's: invalid like any other reply (ValueError).
            raise ValueError(f"expected a JSON object, got {type(raw).__name__}")  # noqa: TRY004
        if not raw:
            raise ValueError("the JSON object is empty")
        value: Any = raw
        if self.model is not None:
            try:
                value = self.model.model_validate(raw)
            except ValidationError as exc:
                first = exc.errors()[0]
                where = ".".join(str(p) for p in first.get("loc", ())) or "object"
                raise ValueError(f"schema mismatch at {where}: {first.get('msg')}") from None
        else:
            error = next(iter(self._validator.iter_errors(raw)), None)
            if error is not None:
                where = "/".join(str(p) for p in error.absolute_path) or "object"
                raise ValueError(f"schema mismatch at {where}: {error.message}")
        if self.parse_fn is not None:
            try:
                value = self.parse_fn(raw)
            except Exception as exc:  # noqa: BLE001 - parse_fn may raise anything
                raise ValueError(f"parse_fn rejected it: {exc}") from None
        return value


def _with_instruction(messages: Sequence[ChatMessage], schema_text: str) -> list[ChatMessage]:
    """``messages`` with the schema instruction appended to the system prompt."""
    instruction = _INSTRUCTION.format(schema=schema_text)
    out = list(messages)
    if out and out[0].role == "system":
        out[0] = out[0].model_copy(update={"content": f"{out[0].content}\n\n{instruction}"})
    else:
        out.insert(0, ChatMessage.system(instruction))
    return out


def _reformat(messages: list[ChatMessage], previous: str, reason: str,
              schema_text: str) -> list[ChatMessage]:
    return [*messages, ChatMessage.assistant(previous),
            ChatMessage.user(REFORMAT_PROMPT.format(reason=reason, schema=schema_text))]


def _short(text: str, limit: int = 80) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit - 1] + "…"


async def structured_llm_call(
    llm: LLM,
    messages: Sequence[ChatMessage],
    schema: type[BaseModel] | dict[str, Any],
    *,
    function_name: str,
    function_description: str = "Return the result in the required structure.",
    parse_fn: Callable[[dict[str, Any]], T] | None = None,
    regex_fallback: Callable[[str], dict[str, Any] | None] | None = None,
    default_value: Any = _UNSET,
    temperature: float | None = None,
    max_tokens: int | None = None,
) -> StructuredCallResult[Any]:
    """Get a schema-valid value from ``llm`` through the three-level degradation chain."""
    check = _Validator(schema, parse_fn)
    abilities = llm.abilities
    failures: list[str] = []
    usage = Usage()
    calls = 0

    async def call(msgs: list[ChatMessage], **kwargs: Any) -> ChatMessage:
        nonlocal usage, calls
        calls += 1
        result = await llm.chat(msgs, temperature=temperature, max_tokens=max_tokens, **kwargs)
        usage = usage + result.usage
        return result.message

    def done(value: Any, raw: dict[str, Any], level: int) -> StructuredCallResult[Any]:
        return StructuredCallResult(value=value, raw=raw, level_used=level, llm_calls=calls,
                                    usage=usage, failures=failures)

    def attempt(raw: Any) -> tuple[Any, str | None]:
        try:
            return check(raw), None
        except ValueError as exc:
            return None, str(exc)

    # --- level 1: native function calling --------------------------------------------------
    if abilities.get("tool_call"):
        spec = {"type": "function", "function": {
            "name": function_name, "description": function_description,
            "parameters": check.json_schema}}
        try:
            reply = await call(list(messages), tools=[spec],
                               tool_choice={"type": "function", "function": {"name": function_name}})
        except _TERMINAL_ERRORS:
            raise
        except LLMError as exc:
            failures.append(f"level 1 ({LEVEL_NAMES[1]}): the call failed: {exc}")
        else:
            reason = "the model returned no tool call"
            for tool_call in reply.tool_calls:
                try:
                    raw = loads_lenient(tool_call.arguments) if tool_call.arguments.strip() else {}
                except ValueError:
                    raw = extract_json(tool_call.arguments)
                    if raw is None:
                        reason = f"the arguments are not valid JSON: {_short(tool_call.arguments)}"
                        continue
                value, error = attempt(raw)
                if error is None:
                    return done(value, raw, 1)
                reason = error
            failures.append(f"level 1 ({LEVEL_NAMES[1]}): {reason}")

    instructed = _with_instruction(messages, check.schema_text)

    async def text_level(level: int, **kwargs: Any) -> StructuredCallResult[Any] | None:
        msgs = instructed
        for try_no in (1, 2):
            try:
                reply = await call(msgs, **kwargs)
            except _TERMINAL_ERRORS:
                raise
            except LLMError as exc:
                failures.append(f"level {level} ({LEVEL_NAMES[level]}): the call failed: {exc}")
                return None
            text = reply.content or ""
            raw: Any = extract_json(text)
            value, error = (None, "no JSON object found in the answer") if raw is None else attempt(raw)
            if error is not None and level == 3 and regex_fallback is not None:
                fallback_raw = regex_fallback(text)
                if fallback_raw is not None:
                    fb_value, fb_error = attempt(fallback_raw)
                    if fb_error is None:
                        return done(fb_value, fallback_raw, level)
            if error is None:
                return done(value, raw, level)
            label = "" if try_no == 1 else " after the reformat retry"
            failures.append(f"level {level} ({LEVEL_NAMES[level]}){label}: {error}"
                            f" (answer: {_short(text) or 'empty'})")
            msgs = _reformat(instructed, text, error, check.schema_text)
        return None

    # --- level 2: JSON mode ----------------------------------------------------------------
    if abilities.get("json_mode"):
        response_format: dict[str, Any] = {"type": "json_object"}
        if accepts_response_schema(llm):
            response_format["schema"] = check.json_schema
        result = await text_level(2, response_format=response_format)
        if result is not None:
            return result

    # --- level 3: plain text ---------------------------------------------------------------
    result = await text_level(3)
    if result is not None:
        return result

    if default_value is not _UNSET:
        return StructuredCallResult(value=default_value, raw=None, level_used=0,
                                    llm_calls=calls, usage=usage, failures=failures)
    tried = ", ".join(f"{n} ({LEVEL_NAMES[n]})" for n in _levels_tried(abilities))
    raise StructuredOutputError(
        f"'{llm.model_id}' did not return a valid '{function_name}' object after {calls} "
        f"call(s); levels tried: {tried}. " + " | ".join(failures),
        hint="Try a larger model, or enable constrained JSON for this local model in Settings.",
        failures=failures, usage=usage, llm_calls=calls)


def _levels_tried(abilities: dict[str, bool]) -> list[int]:
    levels = [1] if abilities.get("tool_call") else []
    if abilities.get("json_mode"):
        levels.append(2)
    return [*levels, 3]


def accepts_response_schema(llm: LLM) -> bool:
    """True for models that constrain decoding to a JSON schema given in ``response_format``
    (llama.cpp with constrained JSON). Hosted OpenAI-style APIs reject the extra key, so it
    is only sent to these. Duck-typed: an adapter opts in with ``accepts_response_schema`` or
    ``constrained_json``; ``LlamaCppLLM`` keeps the flag as ``_constrained_json``."""
    for attribute in ("accepts_response_schema", "constrained_json", "_constrained_json"):
        if getattr(llm, attribute, False) is True:
            return True
    return False
