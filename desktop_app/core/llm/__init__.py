"""LLM layer: the LLM interface, adapters, ModelRegistry and structured output."""

from desktop_app.core.llm.base import LLM, ToolChoice, ToolSpec
from desktop_app.core.llm.registry import ModelEntry, ModelRegistry
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
    "ToolCall", "ToolChoice", "ToolSpec", "Usage", "make_abilities",
]
