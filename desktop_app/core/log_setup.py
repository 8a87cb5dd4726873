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


def configured_secrets() -> list[str]:
    """Every key the settings name (keyring or environment); empty when unreadable."""
    from desktop_app.core.config.secrets import known_secrets
    from desktop_app.core.config.settings import load_settings_safe

    settings, _ = load_settings_safe()
    return known_secrets(settings)


def install(level: int = logging.WARNING) -> None:
    """Route log records to stderr through the redacting formatter (idempotent)."""
    root = logging.getLogger()
    if any(isinstance(h.formatter, RedactingFormatter) for h in root.handlers):
        return
    handler = CurrentStderrHandler()
    handler.setFormatter(RedactingFormatter(configured_secrets, "%(levelname)s: %(message)s"))
    root.addHandler(handler)
    root.setLevel(level)
