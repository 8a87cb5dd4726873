"""A log file a child process writes to through a pipe, with secrets scrubbed on the way.

An MCP server gets its token through the environment the user configured, and servers
print their environment or a failing request (token included) to stderr when they fail.
The app keeps that stderr as the server's log, so every line passes through ``redact``
with the server's configured environment values and the app's API keys first.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import TextIO

from desktop_app.core.config.secrets import redact


class ScrubbedLog:
    """``writer`` is a real file (it has a ``fileno``) for the child's stderr; a thread
    copies what arrives to ``path`` with ``secrets`` replaced."""

    def __init__(self, path: Path, secrets: Iterable[str]) -> None:
        self.path = path
        self._secrets = [s for s in secrets if s and len(s) >= 8]
        read_fd, write_fd = os.pipe()
        self.writer: TextIO = os.fdopen(write_fd, "w", encoding="utf-8", buffering=1)
        self._reader = os.fdopen(read_fd, "r", encoding="utf-8", errors="replace")
        self._thread = threading.Thread(target=self._copy, name=f"log-{path.name}", daemon=True)
        self._thread.start()

    @property
    def closed(self) -> bool:
        return self.writer.closed

    def _copy(self) -> None:
        with self._reader, open(self.path, "a", encoding="utf-8") as log:
            for line in self._reader:  # ends when every writer (ours, the child's) closed
                log.write(redact(line, self._secrets))
                log.flush()

    def flush(self) -> None:
        self.writer.flush()

    def close(self, timeout: float = 2.0) -> None:
        """Close our end; the copy ends once the child's end is closed too."""
        if not self.writer.closed:
            self.writer.close()
        self._thread.join(timeout)
