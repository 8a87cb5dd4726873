"""PlanAnalyzer: did the executed plan achieve the goal? (SPEC §7)

One structured call over the step results gives ``achieved``, ``confidence`` and a draft
final answer. Small models are sloppy with types, so the schema accepts what they write
(``"false"``, ``"0.8"``, ``"80%"``) and normalises it: a string ``"false"`` is false, and
confidence always ends up in 0..1. If the analysis itself fails the verdict falls back to
the step states, so a broken analysis never loops the run into re-planning.
"""

from __future__ import annotations

import logging
import math
import re
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from desktop_app.core.dag.plan import compact_schema
from desktop_app.core.dag.results import ExecutionResult
from desktop_app.core.errors import LLMBadOutputError
from desktop_app.core.llm.types import ChatMessage, Usage

if TYPE_CHECKING:
    from desktop_app.core.llm.base import LLM

log = logging.getLogger(__name__)

ANALYSIS_FUNCTION = "submit_analysis"
_TRUE = {"true", "yes", "y", "1", "achieved", "done", "success", "ok"}
_FALSE = {"false", "no", "n", "0", "not achieved", "failed", "none", "null", ""}
_NUMBER = re.compile(r"[-+]?\d*\.?\d+")


def parse_bool(value: Any) -> bool:
    """A model's idea of a boolean: ``"false"``/``"no"``/``0`` are false, not truthy strings."""
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)):
        return value > 0
    if value is None:
        return False
    text = str(value).strip().lower().rstrip(".!")
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise ValueError(f"cannot read {value!r} as true or false")


def parse_confidence(value: Any) -> float:
    """A number in 0..1 from ``0.8``, ``"0.8"``, ``"80%"``, ``"high"``; clamped."""
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if value is None:
        return 0.0
    if isinstance(value, (int, float)):
        number = float(value)
    else:
        text = str(value).strip().lower()
        words = {"high": 0.9, "medium": 0.6, "moderate": 0.6, "low": 0.3}
        if text in words:
            return words[text]
        match = _NUMBER.search(text)
        if match is None:
            raise ValueError(f"cannot read {value!r} as a confidence")
        number = float(match.group())
        if "%" in text:
            number /= 100.0
    if math.isnan(number):
        return 0.0
    return min(1.0, max(0.0, number))


class Analysis(BaseModel):
    """The analyzer's verdict (also the schema the analysis call fills in)."""

    model_config = ConfigDict(extra="ignore", json_schema_extra=compact_schema)

    achieved: bool = Field(description="true if the step results fully achieve the goal")
    confidence: float = Field(default=0.5, description="how sure you are, from 0 to 1")
    reason: str = Field(default="", description="one sentence: why, or what is missing")
    final_answer: str = Field(default="", description="the answer to the goal from the results, "
                                              "or empty if not achieved")

    @field_validator("achieved", mode="before")
    @classmethod
    def _achieved(cls, value: Any) -> bool:
        return parse_bool(value)

    @field_validator("confidence", mode="before")
    @classmethod
    def _confidence(cls, value: Any) -> float:
        return parse_confidence(value)

    @field_validator("reason", "final_answer", mode="before")
    @classmethod
    def _text(cls, value: Any) -> str:
        return "" if value is None else str(value)


class AnalysisOutcome(BaseModel):
    """An ``Analysis`` plus what it cost and whether it came from the model."""

    analysis: Analysis
    usage: Usage = Field(default_factory=Usage)
    from_model: bool = True


SYSTEM_PROMPT = (
    "You check whether a plan's results achieve a goal. Read the goal and the result of "
    "every step. Answer with only a JSON object: "
    '{"achieved": true or false, "confidence": a number from 0 to 1, '
    '"reason": "one sentence", "final_answer": "the answer to the goal, or empty"}. '
    "achieved is false if an essential part is missing or a needed step failed."
)


class PlanAnalyzer:
    """Judges one round of execution with a structured call."""

    def __init__(self, llm: LLM, *, max_result_chars: int = 1500,
                 max_tokens: int | None = 768) -> None:
        self._llm = llm
        self.max_result_chars = max_result_chars
        self.max_tokens = max_tokens

    def _messages(self, goal: str, execution: ExecutionResult, previous: str) -> list[ChatMessage]:
        user = f"Goal: {goal.strip()}\n\n"
        if previous.strip():
            user += f"Earlier rounds:\n{previous.strip()}\n\n"
        user += "Step results:\n" + execution.summary(max_chars=self.max_result_chars)
        return [ChatMessage.system(SYSTEM_PROMPT), ChatMessage.user(user)]

    @staticmethod
    def fallback(execution: ExecutionResult, reason: str) -> Analysis:
        """A verdict from the step states alone (used when the model cannot judge)."""
        achieved = bool(execution.runs) and execution.all_done
        return Analysis(achieved=achieved, confidence=0.5 if achieved else 0.0, reason=reason)

    async def analyze(self, goal: str, execution: ExecutionResult, *,
                      previous: str = "") -> AnalysisOutcome:
        """The verdict on ``execution``; never raises for bad model output."""
        if not execution.by_state("done"):
            return AnalysisOutcome(analysis=self.fallback(
                execution, "No step finished successfully."), from_model=False)
        from desktop_app.core.llm.structured import structured_llm_call

        try:
            result: Any = await structured_llm_call(
                self._llm, self._messages(goal, execution, previous), Analysis,
                function_name=ANALYSIS_FUNCTION,
                function_description="Submit the verdict on the plan's results.",
                max_tokens=self.max_tokens)
        except (LLMBadOutputError, ValueError) as exc:
            log.info("plan analysis unusable: %s", exc)
            usage = getattr(exc, "usage", None)
            return AnalysisOutcome(
                analysis=self.fallback(execution, "The analysis could not be read; judged "
                                                  "from the step states."),
                usage=usage if isinstance(usage, Usage) else Usage(), from_model=False)
        value = result.value
        analysis = value if isinstance(value, Analysis) else Analysis.model_validate(
            value.model_dump() if hasattr(value, "model_dump") else value)
        return AnalysisOutcome(analysis=analysis, usage=result.usage or Usage())
