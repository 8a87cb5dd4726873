"""``create_html_artifact``: turns a title and a body into an HTML document for the preview.

The LLM only ever sees a one-line summary of the artifact (the engine replaces rich content);
the UI renders the document in its sandboxed web view. The body is HTML written by the model;
the web view, not this tool, is what keeps it from reaching anything (no scripts, no remote
loads) — here we only build a complete, well-formed page around it.
"""

from __future__ import annotations

import html
import re
from collections.abc import Mapping
from typing import Any

from desktop_app.core.tools.base import Artifact, Tool, ToolResult

#: Upper bound for the body, so a runaway model cannot produce a 100 MB page.
MAX_BODY_CHARS = 200_000

_TEMPLATE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title>
<style>
body {{ font-family: system-ui, sans-serif; margin: 2rem; line-height: 1.5; }}
table {{ border-collapse: collapse; }}
th, td {{ border: 1px solid #999; padding: .3rem .6rem; }}
</style>
</head>
<body>
<h1>{title}</h1>
{body}
</body>
</html>
"""


def slugify(title: str) -> str:
    """A safe file name stem from a title ('Sales Q3!' → 'sales-q3')."""
    slug = re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")
    return slug[:60] or "artifact"


class HtmlArtifactTool(Tool):
    """Creates an HTML document (report, table, chart markup) shown in the preview pane."""

    name = "create_html_artifact"
    description = "Make an HTML page from a title and HTML body (previewed)"
    parameters: Mapping[str, Any] = {
        "type": "object",
        "properties": {
            "title": {"type": "string", "description": "Document title"},
            "body": {"type": "string", "description": "HTML for the page body"},
        },
        "required": ["title", "body"],
        "additionalProperties": False,
    }
    read_only = True

    async def run(self, args: dict[str, Any]) -> ToolResult:
        title = str(args["title"]).strip() or "Untitled"
        body = str(args["body"])
        if len(body) > MAX_BODY_CHARS:
            return ToolResult.failure(
                f"The body has {len(body)} characters; the limit is {MAX_BODY_CHARS}. "
                "Make the document shorter.")
        document = _TEMPLATE.format(title=html.escape(title), body=body)
        name = f"{slugify(title)}.html"
        return ToolResult(text=f"Created HTML artifact '{name}' ({len(document)} characters).",
                          artifacts=[Artifact(name=name, mime_type="text/html", content=document)],
                          confirmation=f"Here is the page “{title}”.")
