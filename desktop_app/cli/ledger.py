"""``desktop-app ledger``: what left this computer — every request the app sent, where and why.

    desktop-app ledger                      # newest last: time, where, purpose, bytes
    desktop-app ledger --since 2026-12-01 --json
    desktop-app ledger --show 12            # the exact content request 12 sent
    desktop-app ledger --clear

Requests to servers on this computer (localhost) are listed as local; --remote-only hides
them. The ledger never holds an API key (keys travel in headers, which are not kept).
"""

from __future__ import annotations

import argparse
import json
from datetime import UTC, datetime
from typing import Any

from desktop_app.core import egress
from desktop_app.core.errors import ConfigError


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "ledger", help="what left this computer: every request the app sent",
        description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--since", metavar="DATE",
                        help="only requests from this date or time on (YYYY-MM-DD[THH:MM])")
    parser.add_argument("--conversation", metavar="ID", help="only this conversation's")
    parser.add_argument("--remote-only", action="store_true",
                        help="hide requests to servers on this computer")
    parser.add_argument("--json", action="store_true", help="print the rows as JSON")
    parser.add_argument("--show", type=int, metavar="N", help="print the content request N sent")
    parser.add_argument("--clear", action="store_true", help="delete every row")
    parser.set_defaults(func=run)


def _since(text: str | None) -> str | None:
    if text is None:
        return None
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise ConfigError(f"'{text}' is not a date.",
                          hint="Write it as YYYY-MM-DD or YYYY-MM-DDTHH:MM.") from None
    if moment.tzinfo is None:
        moment = moment.astimezone()  # the user's own clock
    return moment.astimezone(UTC).isoformat(timespec="milliseconds")


def run(args: argparse.Namespace) -> int:
    ledger = egress.ledger()
    if args.clear:
        count = ledger.clear()
        print(f"Deleted {count} ledger row{'s' if count != 1 else ''} ({ledger.path}).")
        return 0
    rows = ledger.entries(since=_since(args.since), conversation_id=args.conversation,
                          include_local=not args.remote_only)
    if args.show is not None:
        found = next((row for row in rows if row.id == args.show), None)
        if found is None:
            raise ConfigError(f"There is no ledger row {args.show}.",
                              hint="Run 'desktop-app ledger' to see the rows.")
        print(found.content)
        return 0
    if args.json:
        print(json.dumps([row.to_dict() for row in rows], indent=2, ensure_ascii=False))
        return 0
    if not rows:
        print("Nothing has left this computer" + (" since then." if args.since else "."))
        return 0
    for row in rows:
        where = f"{row.host} (this computer)" if row.local else row.host
        status = "" if row.error is None else f"  failed: {row.error}"
        print(f"{row.id:>5}  {egress.local_time(row.time)}  {where:32}  {row.purpose:22}  "
              f"sent {egress.human_bytes(row.bytes_sent):>8}  "
              f"received {egress.human_bytes(row.bytes_received):>8}{status}")
    remote = [row for row in rows if not row.local]
    print(f"\n{len(remote)} request{'s' if len(remote) != 1 else ''} left this computer, "
          f"{egress.human_bytes(sum(r.bytes_sent for r in remote))} sent. "
          f"The exact content: desktop-app ledger --show N. Kept in {ledger.path}.")
    return 0
