"""``desktop-app conversations ...``: the saved conversations, headless.

    desktop-app conversations list [--archived | --all | --trash] [--json]
    desktop-app conversations show ID [--last N]
    desktop-app conversations search WORDS... [--limit N] [--json]
    desktop-app conversations export ID... | --all  [--format md|json] [-o FILE]
    desktop-app conversations import FILE   (our JSON export, ChatGPT conversations.json/zip)
    desktop-app conversations rename ID TITLE | pin ID [--off] | archive ID [--off]
    desktop-app conversations delete ID | restore ID | purge [--older-than DAYS]
    desktop-app conversations backup FILE   (a consistent copy of the whole database)

IDs may be abbreviated to any unique prefix (like git). Exports are written with every
configured API key redacted.
"""

from __future__ import annotations

import argparse
import json
import sys
from datetime import datetime
from pathlib import Path
from typing import Any

from desktop_app.core.errors import StorageError
from desktop_app.core.store.conversation_store import ConversationStore
from desktop_app.core.store.records import Conversation


def register(subparsers: Any) -> None:
    """Add the ``conversations`` subcommand and its actions."""
    parser = subparsers.add_parser(
        "conversations", aliases=["conv"], help="list, search, export and import conversations",
        description="Work with the saved conversations (the same database the window uses).")
    parser.add_argument("--db", type=Path, help=argparse.SUPPRESS)  # tests and benchmarks
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)

    p = actions.add_parser("list", help="conversations, pinned first, newest first")
    group = p.add_mutually_exclusive_group()
    group.add_argument("--archived", action="store_true", help="only archived ones")
    group.add_argument("--all", action="store_true", help="archived ones too")
    group.add_argument("--trash", action="store_true", help="deleted ones (restorable)")
    p.add_argument("--limit", type=int, default=None, metavar="N")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=_list)

    p = actions.add_parser("show", help="print a conversation as Markdown")
    p.add_argument("id")
    p.add_argument("--last", type=int, default=None, metavar="N", help="only the last N messages")
    p.set_defaults(func=_show)

    p = actions.add_parser("search", help="full-text search over all messages")
    p.add_argument("query", nargs="+")
    p.add_argument("--limit", type=int, default=20, metavar="N")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=_search)

    p = actions.add_parser("export", help="export to Markdown or JSON")
    p.add_argument("ids", nargs="*", metavar="ID")
    p.add_argument("--all", action="store_true", help="every conversation (JSON only)")
    p.add_argument("--format", choices=("md", "json"), default="md")
    p.add_argument("-o", "--output", type=Path, help="file to write (default: stdout)")
    p.set_defaults(func=_export)

    p = actions.add_parser("import", help="import a JSON export or ChatGPT's export")
    p.add_argument("file", type=Path)
    p.set_defaults(func=_import)

    p = actions.add_parser("rename", help="give a conversation a new title")
    p.add_argument("id")
    p.add_argument("title", nargs="+")
    p.set_defaults(func=_rename)

    for name, helptext in (("pin", "pin to the top"), ("archive", "hide from the main list")):
        p = actions.add_parser(name, help=helptext)
        p.add_argument("id")
        p.add_argument("--off", action="store_true", help=f"un{name}")
        p.set_defaults(func=_pin if name == "pin" else _archive)

    p = actions.add_parser("delete", help="move to the trash (undo with restore)")
    p.add_argument("id")
    p.set_defaults(func=_delete)
    p = actions.add_parser("restore", help="take back out of the trash")
    p.add_argument("id")
    p.set_defaults(func=_restore)
    p = actions.add_parser("backup", help="copy the whole database to a file (safe while "
                                          "the app runs)")
    p.add_argument("file", type=Path)
    p.set_defaults(func=_backup)

    p = actions.add_parser("purge", help="empty the trash for good")
    p.add_argument("--older-than", type=float, default=0.0, metavar="DAYS",
                   help="only conversations trashed at least DAYS ago")
    p.set_defaults(func=_purge)


def _open(args: argparse.Namespace) -> ConversationStore:
    return ConversationStore(args.db)


def _when(ts: float) -> str:
    return datetime.fromtimestamp(ts).strftime("%Y-%m-%d %H:%M")


def _line(c: Conversation) -> str:
    flags = ("📌" if c.pinned else "") + (" [archived]" if c.archived else "") + \
        (" [trash]" if c.deleted_at is not None else "")
    return (f"{c.id[:12]}  {_when(c.updated_at)}  {c.message_count:>5} msgs  "
            f"{c.title or '(untitled)'}{' ' + flags.strip() if flags.strip() else ''}")


def _conv_json(c: Conversation) -> dict[str, Any]:
    return {"id": c.id, "title": c.title, "model": c.model, "mode": c.mode,
            "created_at": c.created_at, "updated_at": c.updated_at, "pinned": c.pinned,
            "archived": c.archived, "deleted_at": c.deleted_at,
            "message_count": c.message_count}


def _list(args: argparse.Namespace) -> int:
    with _open(args) as store:
        archived: bool | None = True if args.archived else None if args.all else False
        convs = store.list_conversations(archived=None if args.trash else archived,
                                         deleted=args.trash, limit=args.limit)
    if args.json:
        print(json.dumps([_conv_json(c) for c in convs], ensure_ascii=False, indent=2))
    elif not convs:
        print("no conversations", file=sys.stderr)
    for c in [] if args.json else convs:
        print(_line(c))
    return 0


def _show(args: argparse.Namespace) -> int:
    from desktop_app.core.store.exporting import export_markdown

    with _open(args) as store:
        detail = store.load_conversation(store.resolve_id(args.id), last=args.last)
    sys.stdout.write(export_markdown(detail, redact=_secrets()))
    return 0


def _search(args: argparse.Namespace) -> int:
    with _open(args) as store:
        hits = store.search(" ".join(args.query), limit=args.limit)
    if args.json:
        print(json.dumps([{"conversation_id": h.conversation_id, "title": h.conversation_title,
                           "message_id": h.message_id, "role": h.role, "snippet": h.snippet}
                          for h in hits], ensure_ascii=False, indent=2))
        return 0
    if not hits:
        print("no matches", file=sys.stderr)
        return 1
    for h in hits:
        snippet = " ".join(h.snippet.split())
        print(f"{h.conversation_id[:12]}  {h.conversation_title or '(untitled)'}  "
              f"[{h.role} #{h.message_id}]\n    {snippet}")
    return 0


def _secrets() -> list[str]:
    from desktop_app.core.config.secrets import known_secrets
    from desktop_app.core.config.settings import load_settings

    return known_secrets(load_settings())


def _export(args: argparse.Namespace) -> int:
    from desktop_app.core.store.exporting import export_json, export_markdown

    if not args.ids and not args.all:
        raise StorageError("Say which conversations to export.",
                           hint="Give one or more ids, or --all (with --format json).")
    with _open(args) as store:
        ids = [c.id for c in store.list_conversations(archived=None)] if args.all else \
            [store.resolve_id(i) for i in args.ids]
        details = [store.load_conversation(i) for i in ids]
    redact = _secrets()
    if args.format == "json":
        text = export_json(details, redact=redact)
    elif len(details) == 1:
        text = export_markdown(details[0], redact=redact)
    else:
        text = "\n\n---\n\n".join(export_markdown(d, redact=redact) for d in details)
    if args.output:
        args.output.write_text(text, encoding="utf-8")
        print(f"exported {len(details)} conversation(s) to {args.output}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0


def _import(args: argparse.Namespace) -> int:
    from desktop_app.core.store.importing import import_file

    with _open(args) as store:
        report = import_file(store, args.file)
    for c in report.imported:
        print(f"imported {c.id[:12]}  {c.message_count:>5} msgs  {c.title or '(untitled)'}")
    for reason in report.skipped:
        print(f"skipped: {reason}", file=sys.stderr)
    print(f"{len(report.imported)} imported, {len(report.unchanged)} already there, "
          f"{len(report.skipped)} skipped", file=sys.stderr)
    return 0 if report.imported or not report.skipped else 1


def _change(args: argparse.Namespace, action: str, *values: Any) -> int:
    with _open(args) as store:
        conv = getattr(store, action)(store.resolve_id(args.id), *values)
    print(_line(conv))
    return 0


def _rename(args: argparse.Namespace) -> int:
    return _change(args, "rename_conversation", " ".join(args.title))


def _pin(args: argparse.Namespace) -> int:
    return _change(args, "set_pinned", not args.off)


def _archive(args: argparse.Namespace) -> int:
    return _change(args, "set_archived", not args.off)


def _delete(args: argparse.Namespace) -> int:
    code = _change(args, "delete_conversation")
    print(f"moved to the trash; undo with: desktop-app conversations restore {args.id}",
          file=sys.stderr)
    return code


def _restore(args: argparse.Namespace) -> int:
    return _change(args, "restore_conversation")


def _purge(args: argparse.Namespace) -> int:
    with _open(args) as store:
        count = store.purge_deleted(older_than=args.older_than * 86400)
    print(f"permanently deleted {count} conversation(s)", file=sys.stderr)
    return 0


def _backup(args: argparse.Namespace) -> int:
    with _open(args) as store:
        target = store.backup_to(args.file)
        count = len(store.list_conversations(archived=None))
    print(f"backed up {count} conversation(s) to {target}", file=sys.stderr)
    return 0
