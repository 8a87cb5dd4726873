"""The privacy ledger: every request that left the computer, kept in SQLite (SPEC §11).

One row per request: when, destination host and URL, purpose, the conversation and message
it served, bytes sent and received (bodies, as on the wire), the HTTP status, and the exact
content sent (a download: its URL). Requests to this computer (a local server) are recorded
too and marked local. No header is kept, so an API key (sent in one) never reaches the
ledger; a client that knows its key also removes it from the content (``transport``).

Rows are written by a thread of the ledger's own, so a request finishing on the window's
thread never waits for the disk; ``flush()`` waits for the writes (readers call it first).
The file lives in the data folder (``privacy-ledger.db``); ``clear()`` empties it.
"""

from __future__ import annotations

import logging
import queue
import sqlite3
import threading
import uuid
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from desktop_app.core.errors import DesktopAppError

log = logging.getLogger(__name__)

FILE_NAME = "privacy-ledger.db"
#: Content kept per request; a longer body is kept up to here and says how much was cut.
MAX_CONTENT_CHARS = 4_000_000

_SCHEMA = """
CREATE TABLE IF NOT EXISTS requests (
    id INTEGER PRIMARY KEY,
    time TEXT NOT NULL,
    host TEXT NOT NULL,
    url TEXT NOT NULL,
    method TEXT NOT NULL,
    purpose TEXT NOT NULL,
    conversation_id TEXT,
    message_id TEXT,
    bytes_sent INTEGER NOT NULL,
    bytes_received INTEGER NOT NULL,
    status INTEGER,
    local INTEGER NOT NULL,
    content TEXT NOT NULL,
    error TEXT,
    trip TEXT
);
CREATE INDEX IF NOT EXISTS requests_time ON requests(time);
CREATE INDEX IF NOT EXISTS requests_message ON requests(message_id);
CREATE INDEX IF NOT EXISTS requests_conversation ON requests(conversation_id);
CREATE INDEX IF NOT EXISTS requests_trip ON requests(trip);
"""
_COLUMNS = ("time", "host", "url", "method", "purpose", "conversation_id", "message_id",
            "bytes_sent", "bytes_received", "status", "local", "content", "error", "trip")
#: A request recorded when it left, whose answer never came to an end (the app was stopped
#: while it streamed, say): what was sent is known, what came back is not.
UNFINISHED = "no complete answer recorded"


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


@dataclass
class EgressRecord:
    """One request that left (or, marked local, stayed on) the computer."""

    host: str
    url: str
    method: str
    purpose: str
    bytes_sent: int
    bytes_received: int
    content: str
    local: bool
    status: int | None = None
    conversation_id: str | None = None
    message_id: str | None = None
    error: str | None = None
    time: str = field(default_factory=now)
    id: int | None = None
    #: Joins the row written when the request left to the answer's counts (``finish``).
    trip: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class _Finish:
    trip: str
    bytes_received: int
    status: int | None
    error: str | None


class LedgerError(DesktopAppError):
    """The ledger file cannot be read or written."""


class Ledger:
    """The rows of one ledger file; thread-safe."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._pending: queue.Queue[EgressRecord | _Finish | None] = queue.Queue()
        #: Why the last write failed (None: the ledger is being written).
        self.broken: str | None = None
        self._writer: threading.Thread | None = None
        self._start_lock = threading.Lock()

    # --- writing ---------------------------------------------------------------------------
    def record(self, entry: EgressRecord) -> None:
        """Keep ``entry`` (written by the ledger's thread; returns at once)."""
        if len(entry.content) > MAX_CONTENT_CHARS:
            cut = len(entry.content) - MAX_CONTENT_CHARS
            entry.content = (entry.content[:MAX_CONTENT_CHARS]
                             + f"\n[… {cut:,} more characters were sent; not kept here]")
        self._ensure_writer()
        self._pending.put(entry)

    def begin(self, entry: EgressRecord) -> str:
        """Record a request as it leaves (so it is in the ledger even if its answer never
        ends); ``finish`` adds the answer's counts. Returns the request's token."""
        entry.trip = entry.trip or uuid.uuid4().hex
        entry.error = entry.error or UNFINISHED
        self.record(entry)
        return entry.trip

    def finish(self, trip: str, *, bytes_received: int, status: int | None,
               error: str | None = None) -> None:
        self._ensure_writer()
        self._pending.put(_Finish(trip, bytes_received, status, error))

    def check(self) -> None:
        """Raise ``LedgerError`` when the ledger cannot be written: then nothing may be
        sent (a request must never leave unrecorded)."""
        if self.broken is None:
            return
        try:  # it may have been fixed (disk space freed, file moved aside)
            self._connect().close()
        except (sqlite3.Error, OSError):
            raise LedgerError(
                f"Nothing was sent: the privacy ledger {self.path} cannot be written "
                f"({self.broken}), and no request leaves this computer unrecorded.",
                hint="Free disk space, or move the ledger file aside (a new one is "
                     "started).") from None
        self.broken = None

    def flush(self) -> None:
        """Wait until every recorded entry is in the file."""
        if self._writer is not None:
            self._pending.join()

    def _ensure_writer(self) -> None:
        with self._start_lock:
            if self._writer is None or not self._writer.is_alive():
                self._writer = threading.Thread(target=self._write_loop, daemon=True,
                                                name="privacy-ledger")
                self._writer.start()

    def _write_loop(self) -> None:
        while True:
            entry = self._pending.get()
            try:
                if entry is None:
                    return
                if isinstance(entry, _Finish):
                    self._update(entry)
                else:
                    self._insert([_scrubbed(entry)])
            except (sqlite3.Error, OSError) as exc:
                # The request was already on its way; the next one is refused (``check``).
                self.broken = str(exc) or type(exc).__name__
                log.warning("The privacy ledger %s cannot be written: %s", self.path, exc)
            finally:
                self._pending.task_done()

    def _connect(self) -> sqlite3.Connection:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        connection = sqlite3.connect(self.path, timeout=10)
        try:
            columns = {row[1] for row in connection.execute("PRAGMA table_info(requests)")}
            if columns and "trip" not in columns:  # a ledger from before answers were joined
                connection.execute("ALTER TABLE requests ADD COLUMN trip TEXT")
            connection.executescript(_SCHEMA)
        except sqlite3.Error:
            connection.close()
            raise
        return connection

    def _update(self, done: _Finish) -> None:
        connection = self._connect()
        try:
            with connection:
                connection.execute(
                    "UPDATE requests SET bytes_received = ?, status = ?, error = ? "
                    "WHERE trip = ?", (done.bytes_received, done.status, done.error, done.trip))
        finally:
            connection.close()

    def _insert(self, entries: Iterable[EgressRecord]) -> None:
        connection = self._connect()
        try:
            with connection:
                connection.executemany(
                    f"INSERT INTO requests ({', '.join(_COLUMNS)}) "
                    f"VALUES ({', '.join('?' for _ in _COLUMNS)})",
                    [tuple(int(v) if isinstance(v, bool) else v
                           for v in (getattr(e, c) for c in _COLUMNS)) for e in entries])
        finally:
            connection.close()

    # --- reading ---------------------------------------------------------------------------
    def entries(self, *, since: str | None = None, conversation_id: str | None = None,
                message_id: str | None = None, host: str | None = None,
                include_local: bool = True, limit: int | None = None) -> list[EgressRecord]:
        """Rows, oldest first, matching every filter given."""
        self.flush()
        if not self.path.exists():
            return []
        where, params = [], []
        for column, value in (("conversation_id", conversation_id),
                              ("message_id", message_id), ("host", host)):
            if value is not None:
                where.append(f"{column} = ?")
                params.append(value)
        if since is not None:
            where.append("time >= ?")
            params.append(since)
        if not include_local:
            where.append("local = 0")
        sql = (f"SELECT id, {', '.join(_COLUMNS)} FROM requests"
               + (f" WHERE {' AND '.join(where)}" if where else "") + " ORDER BY id")
        if limit is not None:
            sql = f"SELECT * FROM ({sql} DESC LIMIT {int(limit)}) ORDER BY id"
        try:
            connection = self._connect()
            try:
                rows = connection.execute(sql, params).fetchall()
            finally:
                connection.close()
        except sqlite3.Error as exc:
            raise LedgerError(f"The privacy ledger {self.path} cannot be read ({exc}).",
                              hint="Move the file aside; a new one is started.") from None
        return [_record_of(row) for row in rows]

    def clear(self) -> int:
        """Delete every row; returns how many there were."""
        self.flush()
        if not self.path.exists():
            return 0
        connection = self._connect()
        try:
            with connection:
                count = connection.execute("DELETE FROM requests").rowcount
            connection.execute("VACUUM")  # the content is gone from the file, not just unlisted
        finally:
            connection.close()
        return int(count)


def known_keys() -> list[str]:
    """Every key the app knows: the endpoints' (keyring or environment) and the hub's
    token. Read on the ledger's thread (the keyring may wait for an unlock prompt)."""
    from desktop_app.core.log_setup import configured_secrets

    keys = list(configured_secrets())
    try:
        from huggingface_hub import get_token

        token = get_token()
    except Exception:  # noqa: BLE001 - no hub token is the common case
        token = None
    if token:
        keys.append(token)
    return [key for key in keys if len(key) >= 8]


def _without_password(url: str) -> str:
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(url)
    if parts.password is None:
        return url
    host = parts.hostname or ""
    netloc = f"{parts.username}:[removed]@{host}" + (f":{parts.port}" if parts.port else "")
    return urlunsplit(parts._replace(netloc=netloc))


def _scrubbed(entry: EgressRecord) -> EgressRecord:
    """``entry`` without any key the app knows, and without passwords in URLs."""
    keys = known_keys()
    for key in keys:
        entry.content = entry.content.replace(key, "[key removed]")
        entry.url = entry.url.replace(key, "[key removed]")
    entry.url = _without_password(entry.url)
    return entry


def _record_of(row: tuple[Any, ...]) -> EgressRecord:
    values: dict[str, Any] = dict(zip(_COLUMNS, row[1:], strict=True))
    values["local"] = bool(values["local"])
    return EgressRecord(id=row[0], **values)


_ledgers: dict[Path, Ledger] = {}
_ledgers_lock = threading.Lock()


def ledger(path: Path | None = None) -> Ledger:
    """The ledger of the app's data folder (or of ``path``); one object per file."""
    if path is None:
        from desktop_app.core.paths import data_dir

        path = data_dir() / FILE_NAME
    with _ledgers_lock:
        found = _ledgers.get(path)
        if found is None:
            found = _ledgers[path] = Ledger(path)
        return found


def flush_all() -> None:
    """Wait for every ledger's writes (before the process ends)."""
    with _ledgers_lock:
        opened = list(_ledgers.values())
    for each in opened:
        each.flush()


def local_time(stamp: str) -> str:
    """A row's time (UTC, ISO) on the user's own clock, as the ledger shows it."""
    try:
        return datetime.fromisoformat(stamp).astimezone().strftime("%Y-%m-%d %H:%M:%S")
    except ValueError:
        return stamp


def human_bytes(count: int) -> str:
    """'512 B', '3.2 kB', '4.1 MB' (decimal units, as file managers show sizes)."""
    value = float(count)
    for unit in ("B", "kB", "MB", "GB"):
        if value < 1000 or unit == "GB":
            return f"{int(value)} B" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1000
    return f"{count} B"
