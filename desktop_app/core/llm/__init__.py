"""LLM layer: the LLM interface, adapters, ModelRegistry and structured output."""

from desktop_app.core.llm.base import LLM, ToolChoice, ToolSpec
from desktop_app.core.llm.json_extract import extract_json
from desktop_app.core.llm.registry import ModelEntry, ModelRegistry
from desktop_app.core.llm.structured import (
    StructuredCallResult,
    StructuredOutputError,
    structured_llm_call,
)
from desktop_app.core.llm.types import (
    ChatMessage,
    LLMResult,
    StreamChunk,
    ToolCall,
    Usage,
    make_abilities,
)

__all__ = [
    "LLM", "ChatMessage", "LLMResult", "ModelEntry", "ModelRegistry", "StreamChunk",
    "StructuredCallResult", "StructuredOutputError", "ToolCall", "ToolChoice", "ToolSpec",
    "Usage", "extract_json", "make_abilities", "structured_llm_call",
]
