"""A per-call disk budget for a sandboxed program: the workspace and its /tmp together.

Without root there is no file-system quota to give one process tree, and RLIMIT_FSIZE caps
each file, not their sum (a program wrote 720 MiB to the workspace in 1.9 s). So the
folders the program can write are watched while it runs: the free space and free inodes of
their file systems are read every ``interval`` seconds (one ``statvfs`` each, cheap); when
they fell by more than the budget since the start, the folders are measured (off the
event loop) to tell the program's writes from anything else on the machine, and a program
over its budget is stopped. What it may write past the budget is bounded by the write
speed times the interval, and by the file-size limit per file.
"""

from __future__ import annotations

import asyncio
import os
import stat
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

#: Entries counted at most when measuring a folder; a workspace beyond that is not
#: measured again per call (its file system's numbers still are).
_MAX_WALK_ENTRIES = 500_000


@dataclass(frozen=True)
class DiskBudget:
    """What one call may add on disk."""

    max_bytes: int = 256 * 1024 * 1024
    max_files: int = 20_000

    def describe(self) -> str:
        return f"{self.max_bytes // (1024 * 1024)} MB or {self.max_files:,} files"


@dataclass(frozen=True)
class Usage:
    bytes: int
    files: int


def measure(folders: Iterable[Path]) -> Usage:
    """Space allocated (st_blocks) and entries under ``folders``; symlinks not followed."""
    total = files = 0
    pending = [str(f) for f in folders]
    while pending and files < _MAX_WALK_ENTRIES:
        try:
            scanner = os.scandir(pending.pop())
        except OSError:
            continue
        with scanner:
            for entry in scanner:
                files += 1
                try:
                    info = entry.stat(follow_symlinks=False)
                except OSError:
                    continue
                total += getattr(info, "st_blocks", 0) * 512 or info.st_size
                if stat.S_ISDIR(info.st_mode):
                    pending.append(entry.path)
    return Usage(total, files)


def _free(folders: Iterable[Path]) -> Usage:
    """Free bytes and inodes summed over the distinct file systems of ``folders``."""
    seen: set[int] = set()
    free_bytes = free_files = 0
    for folder in folders:
        try:
            device = os.stat(folder).st_dev
            if device in seen:
                continue
            seen.add(device)
            vfs = os.statvfs(folder)
        except OSError:
            continue
        free_bytes += vfs.f_bavail * vfs.f_frsize
        free_files += vfs.f_favail
    return Usage(free_bytes, free_files)


class DiskWatch:
    """Watches ``folders`` for one call; ``exceeded`` says how, once the budget is passed."""

    def __init__(self, folders: list[Path], budget: DiskBudget, interval: float = 0.1) -> None:
        self.folders = folders
        self.budget = budget
        self.interval = interval
        self.exceeded: str | None = None
        self._start_usage = Usage(0, 0)
        self._free_mark = Usage(0, 0)

    def begin(self) -> None:
        """Measure before the program starts (blocking: call it off the event loop)."""
        self._start_usage = measure(self.folders)
        self._free_mark = _free(self.folders)

    def _over(self, used: int, files: int) -> bool:
        return used > self.budget.max_bytes or files > self.budget.max_files

    async def watch(self, stop: Callable[[], None]) -> None:
        """Run until cancelled; calls ``stop`` once when the program is over its budget."""
        while True:
            await asyncio.sleep(self.interval)
            free = _free(self.folders)
            if not self._over(self._free_mark.bytes - free.bytes,
                              self._free_mark.files - free.files):
                continue
            now = await asyncio.to_thread(measure, self.folders)
            grown = Usage(now.bytes - self._start_usage.bytes, now.files - self._start_usage.files)
            if self._over(grown.bytes, grown.files):
                self.exceeded = (f"it wrote more than {self.budget.describe()} to the "
                                 f"workspace and /tmp (the limit for one run)")
                stop()
                return
            # Something else on the machine used the space: count from here, less what
            # the program itself added, so the next check is not triggered by it again.
            self._free_mark = Usage(free.bytes + max(grown.bytes, 0),
                                    free.files + max(grown.files, 0))
