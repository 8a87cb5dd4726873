"""Export conversations: Markdown to read, JSON to keep (complete, versioned, re-importable).

Exports hold conversation data only: never settings, never API keys. As a second guard,
every export takes ``redact``: secrets (the configured API keys, see
``secrets.known_secrets``) that are replaced wherever they appear, for example in a tool
observation that printed an environment, or a key the user pasted into the chat.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

from desktop_app import __version__
from desktop_app.core.store.records import ArtifactRecord, ConversationDetail, Message, ToolStep

EXPORT_FORMAT = "desktop-app/conversations"
EXPORT_VERSION = 1
REDACTED = "[REDACTED]"
#: Shorter "secrets" are not redacted: replacing e.g. "abc" everywhere would mangle the text.
MIN_SECRET_LENGTH = 8


def _iso(ts: float | None) -> str | None:
    if ts is None:
        return None
    return datetime.fromtimestamp(ts, tz=UTC).isoformat(timespec="seconds")


def _redactor(redact: Iterable[str]) -> re.Pattern[str] | None:
    secrets = sorted({s for s in redact if s and len(s) >= MIN_SECRET_LENGTH}, key=len,
                     reverse=True)
    return re.compile("|".join(re.escape(s) for s in secrets)) if secrets else None


def _scrub(value: Any, pattern: re.Pattern[str] | None) -> Any:
    if pattern is None:
        return value
    if isinstance(value, str):
        return pattern.sub(REDACTED, value)
    if isinstance(value, list):
        return [_scrub(v, pattern) for v in value]
    if isinstance(value, dict):
        # Keys too: a tool's arguments or a server's reply can use a secret as a key.
        return {(_scrub(k, pattern) if isinstance(k, str) else k): _scrub(v, pattern)
                for k, v in value.items()}
    return value


# --- JSON ------------------------------------------------------------------------------------

def _artifact_json(a: ArtifactRecord) -> dict[str, Any]:
    return {"name": a.name, "mime_type": a.mime_type, "content": a.content,
            "created_at": a.created_at}


def _step_json(s: ToolStep, artifacts: list[ArtifactRecord]) -> dict[str, Any]:
    return {"iteration": s.iteration, "tool": s.tool, "args": s.args,
            "observation": s.observation, "error": s.error, "elapsed": s.elapsed,
            "created_at": s.created_at,
            "artifacts": [_artifact_json(a) for a in artifacts if a.step_id == s.id]}


def conversation_to_dict(detail: ConversationDetail) -> dict[str, Any]:
    """One conversation as plain data (the element of the JSON export's list)."""
    c = detail.conversation
    index = {m.id: i for i, m in enumerate(detail.messages)}
    interrupts = {i.message_id: i for i in detail.interrupts}
    messages = []
    for m in detail.messages:
        entry: dict[str, Any] = {
            "role": m.role, "content": m.content, "reasoning": m.reasoning, "model": m.model,
            "status": m.status, "error": m.error, "pinned": m.pinned,
            "created_at": m.created_at, "tool_calls": m.tool_calls,
            "tool_call_id": m.tool_call_id, "name": m.name,
            "usage": {"prompt_tokens": m.prompt_tokens,
                      "completion_tokens": m.completion_tokens},
            "timings": {"ttft": m.timings.ttft, "elapsed": m.timings.elapsed,
                        "tokens_per_second": m.timings.tokens_per_second,
                        "prompt_tokens_per_second": m.timings.prompt_tokens_per_second,
                        "iterations": m.timings.iterations},
            "tool_steps": [_step_json(s, detail.artifacts) for s in m.steps],
            "artifacts": [_artifact_json(a) for a in detail.artifacts
                          if a.message_id == m.id and a.step_id is None],
        }
        interrupt = interrupts.get(m.id)
        if interrupt is not None:
            entry["interrupt"] = {
                "status": interrupt.status,
                "run_message_index": index.get(interrupt.run_message_id)
                if interrupt.run_message_id is not None else None}
        messages.append(entry)
    return {
        "id": c.id, "title": c.title, "model": c.model, "mode": c.mode,
        "created_at": c.created_at, "updated_at": c.updated_at,
        "pinned": c.pinned, "archived": c.archived,
        "messages": messages,
        "artifacts": [_artifact_json(a) for a in detail.artifacts
                      if a.message_id is None and a.step_id is None],
        # Versions kept by edit and regenerate: where they fork (messages before) and
        # their messages. Reading an export back keeps the version that was shown.
        "versions": [{"fork_index": v["fork_index"], "version": v["version"],
                      "messages": [{"role": m["role"], "content": m["content"],
                                    "model": m.get("model"), "created_at": m["created_at"]}
                                   for m in v.get("messages", [])]}
                     for v in detail.versions],
    }


def export_json(details: Iterable[ConversationDetail], *, redact: Iterable[str] = ()) -> str:
    """The versioned JSON document ``importing.import_data`` reads back."""
    document = {
        "format": EXPORT_FORMAT, "version": EXPORT_VERSION,
        "exported_at": _iso(datetime.now(tz=UTC).timestamp()),
        "app_version": __version__,
        "conversations": [conversation_to_dict(d) for d in details],
    }
    return json.dumps(_scrub(document, _redactor(redact)), ensure_ascii=False, indent=2)


# --- Markdown --------------------------------------------------------------------------------

def _fence(text: str, lang: str = "") -> str:
    """A code fence longer than any backtick run inside ``text`` (so it cannot break out)."""
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    ticks = "`" * max(3, longest + 1)
    return f"{ticks}{lang}\n{text}\n{ticks}"


def _lang(mime: str) -> str:
    return {"text/html": "html", "text/markdown": "markdown", "application/json": "json",
            "image/svg+xml": "xml"}.get(mime, "text")


def _details(summary: str, body: str) -> str:
    # Blank lines around the body let Markdown inside <details> render on GitHub & co.
    return f"<details>\n<summary>{summary}</summary>\n\n{body}\n\n</details>"


def _step_markdown(s: ToolStep, artifacts: list[ArtifactRecord]) -> str:
    args = s.args if isinstance(s.args, str) else json.dumps(s.args, ensure_ascii=False,
                                                             indent=2)
    timing = f" ({s.elapsed:.2f} s)" if s.elapsed is not None else ""
    state = " — failed" if s.error else ""
    parts = ["**Arguments**", _fence(args, "text" if isinstance(s.args, str) else "json")]
    if s.observation:
        parts += ["**Result**", _fence(s.observation, "text")]
    if s.error:
        parts += ["**Error**", _fence(s.error, "text")]
    for a in artifacts:
        if a.step_id == s.id:
            parts += [f"**Artifact** `{a.name}` ({a.mime_type})",
                      _fence(a.content, _lang(a.mime_type))]
    summary = (f"Tool step {s.iteration}: <code>{html.escape(s.tool)}</code>"
               f"{html.escape(timing + state)}")
    return _details(summary, "\n\n".join(parts))


def _footer(m: Message) -> str:
    bits = []
    if m.prompt_tokens is not None or m.completion_tokens is not None:
        bits.append(f"{m.prompt_tokens or 0} prompt / {m.completion_tokens or 0} completion tokens")
    if m.timings.ttft is not None:
        bits.append(f"first word {m.timings.ttft:.1f} s")
    if m.timings.elapsed is not None:
        bits.append(f"{m.timings.elapsed:.1f} s")
    if m.timings.prompt_tokens_per_second:
        bits.append(f"prompt {m.timings.prompt_tokens_per_second:.0f} tokens/s")
    if m.timings.tokens_per_second:
        bits.append(f"output {m.timings.tokens_per_second:.1f} tokens/s")
    return f"<sub>{' · '.join(bits)}</sub>" if bits else ""


def export_markdown(detail: ConversationDetail, *, redact: Iterable[str] = ()) -> str:
    """A readable document: one section per message, tool steps as collapsible blocks."""
    c = detail.conversation
    interrupt_ids = {i.message_id for i in detail.interrupts}
    out = [f"# {c.title or 'Untitled conversation'}", ""]
    meta = [f"- Created: {_iso(c.created_at)}", f"- Mode: {c.mode}"]
    if c.model:
        meta.insert(0, f"- Model: {c.model}")
    out += meta + ["", "---", ""]
    for m in detail.messages:
        heading = {"user": "User", "assistant": "Assistant", "system": "System",
                   "tool": "Tool result"}[m.role]
        if m.id in interrupt_ids:
            heading = "User (sent while the assistant was working)"
        extra = f" · {m.model}" if m.model and m.role == "assistant" else ""
        out += [f"## {heading}{extra}", f"<sub>{_iso(m.created_at)}</sub>", ""]
        for s in m.steps:
            out += [_step_markdown(s, detail.artifacts), ""]
        if m.reasoning:
            out += [_details("Reasoning", _fence(m.reasoning, "text")), ""]
        if m.role == "tool":
            out += [_details(f"Result of <code>{html.escape(m.name or 'tool')}</code>",
                             _fence(m.content, "text")), ""]
        elif m.content:
            out += [m.content, ""]
        for a in detail.artifacts:
            if a.message_id == m.id and a.step_id is None:
                out += [_details(f"Artifact <code>{html.escape(a.name)}</code>",
                                 _fence(a.content, _lang(a.mime_type))), ""]
        if m.status == "interrupted":
            out += ["> *This answer was interrupted; the text above is what had arrived.*", ""]
        elif m.status == "error":
            out += [f"> *This answer failed: {m.error or 'unknown error'}*", ""]
        footer = _footer(m)
        if footer:
            out += [footer, ""]
    loose = [a for a in detail.artifacts if a.message_id is None and a.step_id is None]
    for a in loose:
        out += [_details(f"Artifact <code>{html.escape(a.name)}</code>",
                         _fence(a.content, _lang(a.mime_type))), ""]
    text = "\n".join(out).rstrip() + "\n"
    return str(_scrub(text, _redactor(redact)))
