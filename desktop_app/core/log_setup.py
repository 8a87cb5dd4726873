"""Logging for the app's entry points: warnings to stderr, never a key in them.

Whatever ends up in a log line (a server's error body echoing the API key, a chained
exception's text) passes through ``redact`` with every key the configured endpoints use.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable, Iterable

from desktop_app.core.config.secrets import redact


class RedactingFormatter(logging.Formatter):
    """A formatter whose output (message, exception and its chain) has secrets replaced."""

    def __init__(self, secrets: Callable[[], Iterable[str]], fmt: str | None = None) -> None:
        super().__init__(fmt)
        self._secrets = secrets
        self._cache: list[str] | None = None

    def format(self, record: logging.LogRecord) -> str:
        if self._cache is None:
            try:
                self._cache = list(self._secrets())
            except Exception:  # noqa: BLE001 - logging must never fail because of this
                self._cache = []
        return redact(super().format(record), self._cache)


class CurrentStderrHandler(logging.Handler):
    """Writes to whatever ``sys.stderr`` is at the time (tests and UIs swap it)."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            sys.stderr.write(self.format(record) + "\n")
        except Exception:  # noqa: BLE001 - the logging module's own convention
            self.handleError(record)


_known: tuple[tuple[int, str, float], list[str]] | None = None


def configured_secrets() -> list[str]:
    """Every key the settings name (keyring or environment); empty when unreadable.

    Kept in memory until a key is stored or deleted or the settings file changes: the
    keyring may wait for an unlock prompt, and the window's error funnel asks on the Qt
    thread (the window warms this on a worker thread at start).
    """
    global _known
    from desktop_app.core.config import secrets
    from desktop_app.core.config.settings import load_settings_safe, settings_path

    path = settings_path()
    try:
        stamp = path.stat().st_mtime
    except OSError:
        stamp = 0.0
    version = (secrets.generation(), str(path), stamp)
    if _known is not None and _known[0] == version:
        return list(_known[1])
    settings, _ = load_settings_safe()
    found = secrets.known_secrets(settings)
    _known = (version, found)
    return list(found)


def install(level: int = logging.WARNING) -> None:
    """Route log records to stderr through the redacting formatter (idempotent)."""
    root = logging.getLogger()
    if any(isinstance(h.formatter, RedactingFormatter) for h in root.handlers):
        return
    handler = CurrentStderrHandler()
    handler.setFormatter(RedactingFormatter(configured_secrets, "%(levelname)s: %(message)s"))
    root.addHandler(handler)
    root.setLevel(level)
