"""Tools: the Tool interface, results with artifacts, the registry and built-in tools."""

from desktop_app.core.tools.base import Artifact, FunctionTool, Tool, ToolRegistry, ToolResult

__all__ = ["Artifact", "FunctionTool", "Tool", "ToolRegistry", "ToolResult"]
