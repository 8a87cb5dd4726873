"""Filling a real file system to its last byte (see the ``small_disk`` fixture)."""

from __future__ import annotations

import errno
from pathlib import Path


def fill_disk(disk: Path) -> Path:
    """Write zeros to ``disk`` until it is full; returns the file (delete it for space)."""
    filler = disk / "filler"
    try:
        with open(filler, "wb") as handle:
            while True:
                handle.write(b"\0" * 65536)
                handle.flush()
    except OSError as exc:
        assert exc.errno == errno.ENOSPC
    return filler
