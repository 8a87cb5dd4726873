"""Repairing tool arguments small models get almost right.

Measured on the bundled 0.5B model: it copies schema words into the arguments
(``{"expression": "98765 / 43", "required": ["expression"]}``), writes numbers as strings
(``"value": "26.2"``), passes a property's own schema as its value
(``{"query": {"type": "string", "description": "Words to look for"}}``), gives one tag where a list is expected, or names an argument
slightly differently (``"expr"``). Each of these is fixed only when the result then
validates against the tool's schema; anything else stays an error the model sees.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from desktop_app.core.errors import ToolError

if TYPE_CHECKING:
    from desktop_app.core.tools.base import Tool

_NUMBER = re.compile(r"^[-+]?\d[\d,_]*(\.\d+)?([eE][-+]?\d+)?$")
#: "3,5" or "12,75": a comma followed by one or two final digits is a decimal comma. Three
#: digits ("1,234") could be either and keep being read as a thousands separator.
_DECIMAL_COMMA = re.compile(r"^[-+]?\d+,\d{1,2}$")
#: "1.234,5" / "1.234.567": dots group thousands, a comma (if any) is the decimal point.
_DOT_GROUPED = re.compile(r"^[-+]?\d{1,3}(\.\d{3})+,\d+$|^[-+]?\d{1,3}(\.\d{3}){2,}$")


def _types(spec: dict[str, Any]) -> set[str]:
    kind = spec.get("type")
    if isinstance(kind, list):
        return {str(k) for k in kind}
    return {str(kind)} if kind else set()


def _coerce(value: Any, spec: dict[str, Any]) -> Any:
    """``value`` converted to what ``spec`` wants, where the conversion is unambiguous."""
    types = _types(spec)
    if not types or not isinstance(spec, dict):
        return value
    if isinstance(value, str):
        text = value.strip()
        if types & {"number", "integer"}:
            number = _number(text)
            if number is not None:
                return int(number) if "integer" in types and number.is_integer() else number
        if "boolean" in types and text.lower() in ("true", "false"):
            return text.lower() == "true"
        if "array" in types and "string" not in types:
            items = [part.strip() for part in text.split(",") if part.strip()]
            return [_coerce(item, spec.get("items") or {}) for item in items]
    if "array" in types and not isinstance(value, list) and "string" not in types:
        return [value]
    if "string" in types and isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    return value


def _number(text: str) -> float | None:
    """``text`` read as a number in English or continental style, or None."""
    if _DECIMAL_COMMA.match(text):
        return float(text.replace(",", "."))
    if _DOT_GROUPED.match(text):
        return float(text.replace(".", "").replace(",", "."))
    if _NUMBER.match(text):
        return float(text.replace(",", "").replace("_", ""))
    return None


def repair_arguments(schema: Mapping[str, Any], args: dict[str, Any]) -> dict[str, Any]:
    """A corrected copy of ``args`` for ``schema`` (the caller validates it again)."""
    props: dict[str, Any] = schema.get("properties") or {}
    if not props:
        return dict(args)
    fixed = {key: _coerce(value, props[key]) if isinstance(props.get(key), dict) else value
             for key, value in args.items() if not _copied_schema(value, props.get(key))}
    unknown = [key for key in fixed if key not in props]
    missing = [key for key in schema.get("required", []) if key not in fixed]
    if len(missing) == 1 and len(unknown) >= 1:
        # A misnamed argument: the one unknown value of the right kind takes the name.
        target = props.get(missing[0], {})
        candidates = [k for k in unknown if not _schema_word(k)
                      and _fits(fixed[k], target)]
        if len(candidates) == 1:
            fixed[missing[0]] = _coerce(fixed.pop(candidates[0]), target)
    if schema.get("additionalProperties") is False:
        fixed = {key: value for key, value in fixed.items() if key in props}
    else:
        # Schema vocabulary is never an argument, whatever the schema allows.
        fixed = {key: value for key, value in fixed.items()
                 if key in props or not _schema_word(key)}
    return fixed


def _copied_schema(value: Any, spec: Any) -> bool:
    """``value`` is the property's schema copied in, not a value: it is then left out (an
    optional argument simply goes missing; a required one stays an error)."""
    return (isinstance(value, dict) and bool(value) and all(_schema_word(k) for k in value)
            and "object" not in (_types(spec) if isinstance(spec, dict) else set()))


def _schema_word(key: str) -> bool:
    return key in ("required", "type", "properties", "additionalProperties", "description")


def _fits(value: Any, spec: dict[str, Any]) -> bool:
    types = _types(spec) if isinstance(spec, dict) else set()
    if not types:
        return True
    coerced = _coerce(value, spec)
    checks = {"string": isinstance(coerced, str), "number": isinstance(coerced, int | float),
              "integer": isinstance(coerced, int), "array": isinstance(coerced, list),
              "object": isinstance(coerced, dict), "boolean": isinstance(coerced, bool)}
    return any(checks.get(t, False) for t in types)


def checked_arguments(tool: Tool, args: dict[str, Any]) -> dict[str, Any]:
    """``args`` as ``tool`` runs them: valid as they are, or repaired when almost right (a
    stray key, a number as text) and valid then; else ``ToolError`` with the first reason."""
    try:
        return tool.validate(args)
    except ToolError:
        try:
            return tool.validate(repair_arguments(tool.parameters, args))
        except ToolError:
            pass
        raise
