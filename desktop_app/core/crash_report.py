"""What an unexpected error leaves behind: a report file with its traceback, keys removed.

Entry points show the person one line (what failed and where the report is) instead of a
traceback; the report holds the details for a bug report, with every configured key
replaced, like every log line (``log_setup``)."""

from __future__ import annotations

import time
import traceback
from pathlib import Path

from desktop_app.core.config.secrets import redact
from desktop_app.core.paths import cache_dir

#: Reports kept; older ones are removed when a new one is written.
KEEP = 20


def _secrets() -> list[str] | None:
    try:
        from desktop_app.core.log_setup import configured_secrets

        return configured_secrets()
    except Exception:  # noqa: BLE001 - the caller then shows and writes nothing unscrubbed
        return None


def explain(exc: BaseException, where: str) -> tuple[str, Path | None]:
    """The line shown for ``exc`` and the report file written for it (None if none could
    be written), both with every configured key removed. The keys are read once: reading
    them means the settings file and the keyring."""
    secrets = _secrets()
    if secrets is None:  # a line or report without key scrubbing would be worse than none
        return f"an unexpected {type(exc).__name__}", None
    return redact(_describe(exc), secrets), _write_report(exc, where, secrets)


def _write_report(exc: BaseException, where: str, secrets: list[str]) -> Path | None:
    """Write ``exc``'s traceback to a new report file; its path, or None if it could not be
    written (a full disk must not turn one error into two)."""
    text = "".join(traceback.format_exception(exc))
    try:
        folder = cache_dir() / "crash-reports"
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{time.strftime('%Y%m%d-%H%M%S')}-{where}.txt"
        path.write_text(redact(text, secrets), encoding="utf-8")
        for old in sorted(folder.glob("*.txt"))[:-KEEP]:
            old.unlink(missing_ok=True)
    except OSError:
        return None
    return path


def _describe(exc: BaseException) -> str:
    """One line a person can act on, for the errors met outside the app's own (an
    exception's text may quote a server's reply: ``explain`` removes keys from it)."""
    import errno
    import sqlite3

    if isinstance(exc, sqlite3.DatabaseError):
        return (f"the conversation database could not be read or written ({exc}). If it is "
                "damaged, move conversations.db aside (the app then starts with an empty "
                "history) and keep the copy for recovery.")
    if isinstance(exc, OSError) and exc.errno == errno.ENOSPC:
        return (f"the disk is full ({exc.filename or 'while writing'}); nothing was lost. "
                "Free some space and try again.")
    if isinstance(exc, OSError):
        where = f": {exc.filename}" if exc.filename else ""
        return f"{exc.strerror or exc}{where}."
    return f"an unexpected {type(exc).__name__}: {exc}"
