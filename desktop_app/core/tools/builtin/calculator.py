"""A safe calculator tool: arithmetic and common math functions, parsed with ``ast``.

No ``eval``: the expression is parsed into a syntax tree and only a whitelist of node
types, operators, functions and constants is evaluated. Exponents and intermediate results
are bounded so a model cannot make the app hang or eat memory with ``9**9**9``.
"""

from __future__ import annotations

import ast
import math
import operator
import re
from collections.abc import Callable, Mapping
from typing import Any

from desktop_app.core.tools.base import Tool, ToolResult

#: Largest absolute exponent accepted for ``**`` (10**1000 is already far past any need).
MAX_EXPONENT = 1000
#: Largest number of digits an integer result may have before we refuse.
MAX_INT_DIGITS = 4300
#: Longest expression accepted (characters).
MAX_EXPRESSION_LENGTH = 2000

_BINARY: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
_UNARY: dict[type[ast.unaryop], Callable[[Any], Any]] = {
    ast.UAdd: operator.pos,
    ast.USub: operator.neg,
}
def percent_change(old: float, new: float) -> float:
    """How many percent ``new`` is above (or below, negative) ``old``."""
    if old == 0:
        raise ValueError("the old value is 0, so the change has no percentage")
    return (new - old) / abs(old) * 100


_FUNCTIONS: dict[str, Callable[..., Any]] = {
    "sqrt": math.sqrt, "sin": math.sin, "cos": math.cos, "tan": math.tan,
    "asin": math.asin, "acos": math.acos, "atan": math.atan,
    "log": math.log, "ln": math.log, "log10": math.log10, "log2": math.log2,
    "exp": math.exp, "abs": abs, "round": round, "floor": math.floor, "ceil": math.ceil,
    "min": min, "max": max, "factorial": math.factorial,
    "percent_change": percent_change,
}
_CONSTANTS: dict[str, float] = {"pi": math.pi, "e": math.e, "tau": math.tau}


class CalculationError(ValueError):
    """The expression is not allowed or cannot be computed; the message says why."""


def _check_size(value: Any) -> Any:
    if isinstance(value, complex):  # e.g. (-8) ** (1/3)
        raise CalculationError("The result is not a real number.")
    # bit_length is cheap; ~3.32 bits per decimal digit.
    if (isinstance(value, int) and not isinstance(value, bool)
            and value.bit_length() > MAX_INT_DIGITS * 3.33):
        raise CalculationError(f"The result has more than {MAX_INT_DIGITS} digits.")
    return value


def _eval(node: ast.AST) -> Any:
    if isinstance(node, ast.Expression):
        return _eval(node.body)
    if isinstance(node, ast.Constant):
        if isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
            return node.value
        raise CalculationError(f"Only numbers are allowed, not {node.value!r}.")
    if isinstance(node, ast.Name):
        if node.id in _CONSTANTS:
            return _CONSTANTS[node.id]
        raise CalculationError(f"Unknown name '{node.id}'. Constants: {', '.join(_CONSTANTS)}.")
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _UNARY[type(node.op)](_eval(node.operand))
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        left, right = _eval(node.left), _eval(node.right)
        if isinstance(node.op, ast.Pow):
            if abs(right) > MAX_EXPONENT:
                raise CalculationError(f"Exponent {right} is too large (limit {MAX_EXPONENT}).")
            # Estimate digits before computing: 10**1000 is fine, 99999**1000 has 5000 digits.
            if (isinstance(left, int) and isinstance(right, int) and right > 0
                    and left not in (0, 1, -1) and right * math.log10(abs(left)) > MAX_INT_DIGITS):
                raise CalculationError(f"The result has more than {MAX_INT_DIGITS} digits.")
        try:
            return _check_size(_BINARY[type(node.op)](left, right))
        except ZeroDivisionError:
            raise CalculationError("Division by zero.") from None
        except OverflowError:
            raise CalculationError("The result is too large to represent.") from None
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not node.keywords:
        fn = _FUNCTIONS.get(node.func.id)
        if fn is None:
            raise CalculationError(
                f"Unknown function '{node.func.id}'. Functions: {', '.join(_FUNCTIONS)}.")
        args = [_eval(arg) for arg in node.args]
        if fn is math.factorial and args and isinstance(args[0], (int, float)) and args[0] > 1000:
            raise CalculationError("factorial() is limited to arguments up to 1000.")
        try:
            return _check_size(fn(*args))
        except (ValueError, TypeError) as exc:
            raise CalculationError(f"{node.func.id}(): {exc}") from None
        except OverflowError:
            raise CalculationError("The result is too large to represent.") from None
    raise CalculationError(f"'{type(node).__name__}' is not allowed in a calculation.")


_PERCENT_OF = re.compile(r"(\d+(?:\.\d+)?)\s*%\s*of\s*", re.IGNORECASE)
_NUMBER = r"\d+(?:\.\d+)?"
#: "249 + 19%" and "129 - 30%" as on a pocket calculator: add or take off that share.
_PLUS_PERCENT = re.compile(rf"({_NUMBER})\s*([+-])\s*({_NUMBER})\s*%(?!\s*[\d(.])")
#: A percentage on its own ("19% * 249"); "10 % 3" (a remainder) is left alone.
_PERCENT = re.compile(rf"({_NUMBER})\s*%(?!\s*[\d(.])")
#: "√12769" as people and small models write a square root ("√(a + b)" keeps its brackets).
_ROOT_OF_NUMBER = re.compile(rf"√\s*({_NUMBER})")
_THOUSANDS = re.compile(r"(?<![\d.])\d{1,3}(?:,\d{3})+(?![\d,])")


def _normalise(expression: str) -> str:
    """What people (and small models) write, as Python arithmetic: ``^`` for powers,
    ``×``/``÷``, ``√``, ``x% of y``, ``y + x%``, ``1,234`` thousands separators (not
    function-argument commas), a trailing ``=``."""
    text = expression.strip().rstrip("=").strip()
    text = text.replace("^", "**").replace("×", "*").replace("÷", "/").replace("−", "-")
    text = _ROOT_OF_NUMBER.sub(r"sqrt(\1)", text).replace("√", "sqrt")
    text = _PERCENT_OF.sub(lambda m: f"{m.group(1)}/100*", text)
    text = _PLUS_PERCENT.sub(lambda m: f"{m.group(1)}*(1{m.group(2)}{m.group(3)}/100)", text)
    text = _PERCENT.sub(lambda m: f"({m.group(1)}/100)", text)
    if "(" not in text:  # min(1,2) keeps its commas
        text = _THOUSANDS.sub(lambda m: m.group().replace(",", ""), text)
    return text


def calculate(expression: str) -> int | float:
    """Evaluate an arithmetic expression safely; raise ``CalculationError`` when not allowed."""
    expression = _normalise(expression)
    if not expression:
        raise CalculationError("The expression is empty.")
    if len(expression) > MAX_EXPRESSION_LENGTH:
        raise CalculationError(f"The expression is longer than {MAX_EXPRESSION_LENGTH} characters.")
    try:
        tree = ast.parse(expression, mode="eval")
    except SyntaxError as exc:
        raise CalculationError(f"Not a valid expression: {exc.msg}.") from None
    value = _check_size(_eval(tree))
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return int(value)
    if not isinstance(value, int | float):
        raise CalculationError(f"The result is not a number: {value!r}.")
    return value


def format_number(value: float) -> str:
    """Plain digits for integers, up to 12 significant digits for floats."""
    if isinstance(value, int):
        return str(value)
    return f"{value:.12g}"


#: "26.2 miles to km", "98.6 °F in °C", "5 km -> mi": a quantity and the unit it is wanted in.
_CONVERSION = re.compile(
    r"^\s*(?:convert\s+)?(?P<value>[-+]?\d[\d.,_ ]*)\s*(?P<source>[^\d\s=][^=]*?)\s*"
    r"(?:->|→|=>|=|\bto\b|\bin\b|\binto\b|\bas\b)\s*(?P<target>[^\d=][^=]*?)\s*\??\s*$",
    re.IGNORECASE)


def unit_conversion(expression: str) -> ToolResult | None:
    """The expression as a unit conversion, when it is one the unit converter knows."""
    from desktop_app.core.errors import ToolArgumentError
    from desktop_app.core.tools.builtin.unit_names import read_number
    from desktop_app.core.tools.builtin.units import convert, format_quantity

    match = _CONVERSION.match(expression)
    if match is None:
        return None
    source, target = match.group("source").strip(), match.group("target").strip()
    try:
        value = read_number(match.group("value").strip())
        if value is None:
            return None
        result = convert(value, source, target)
    except (ToolArgumentError, ValueError):
        return None
    return ToolResult(text=f"{format_quantity(value)} {source} = "
                           f"{format_quantity(result)} {target}")


class CalculatorTool(Tool):
    """Evaluates arithmetic expressions exactly (integers) or to 12 significant digits."""

    name = "calculator"
    description = "Exact arithmetic: + - * / // % **, 'x% of y', sqrt, sin, log, pi, e"
    parameters: Mapping[str, Any] = {
        "type": "object",
        "properties": {
            # No example values: a small model copies them into unrelated calls (a
            # thank-you once became a call with the example's numbers).
            "expression": {"type": "string", "description": "The expression to compute"},
        },
        "required": ["expression"],
        "additionalProperties": False,
    }
    read_only = True
    pure = True

    async def run(self, args: dict[str, Any]) -> ToolResult:
        expression = str(args["expression"])
        quantity = unit_conversion(expression)
        if quantity is not None:
            # Small models send conversions here as often as to convert_units: both work.
            return quantity
        try:
            value = calculate(expression)
        except CalculationError as exc:
            return ToolResult.failure(f"{exc} Expression: {expression}")
        return ToolResult(text=f"{expression.strip()} = {format_number(value)}")
