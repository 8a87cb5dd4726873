"""A per-call disk budget for a sandboxed program: the workspace and its /tmp together.

Without root there is no file-system quota to give one process tree, and RLIMIT_FSIZE caps
each file, not their sum (a program wrote 720 MiB to the workspace in 1.9 s). So the
folders the program can write are watched while it runs: the free space and free inodes of
their file systems are read every ``interval`` seconds (one ``statvfs`` each, cheap); when
they fell by more than the budget since the start, what the program holds is measured (off
the event loop): the blocks allocated under the folders, walked by directory descriptor
(no path-length limit), plus deleted files its processes still hold open. That tells its
writes from anything else on the machine; a program over its budget is stopped, and the
folders are measured once more when it ends (a burst just before exiting is reported
too). ``fallocate``, which reserves gigabytes in a millisecond, is refused by the seccomp
filter. What a program may write past the budget is bounded by its write speed times the
interval, and by the file-size limit per file.
"""

from __future__ import annotations

import asyncio
import os
import stat
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

#: Entries counted at most when measuring a folder; past that the measurement is treated
#: as incomplete (and the file systems' numbers are believed).
_MAX_WALK_ENTRIES = 500_000
_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0)


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
    #: Every folder could be read (a folder that cannot be listed hides what is in it).
    complete: bool = True


def _walk(fd: int, seen: set[tuple[int, int]], budget: list[int]) -> tuple[int, int, bool]:
    """Blocks and inodes below the open directory ``fd`` (which this closes)."""
    total = files = 0
    complete = True
    try:
        with os.scandir(fd) as entries:
            children: list[str] = []
            for entry in entries:
                budget[0] -= 1
                if budget[0] < 0:
                    return total, files, False
                try:
                    info = entry.stat(follow_symlinks=False)
                except OSError:
                    complete = False
                    continue
                key = (info.st_dev, info.st_ino)
                if key not in seen:  # a hard link adds no inode and no blocks
                    seen.add(key)
                    files += 1
                    total += getattr(info, "st_blocks", 0) * 512
                if stat.S_ISDIR(info.st_mode):
                    children.append(entry.name)
            for name in children:
                try:
                    child = os.open(name, _DIR_FLAGS, dir_fd=fd)
                except OSError:
                    complete = False
                    continue
                sub_total, sub_files, sub_complete = _walk(child, seen, budget)
                total, files = total + sub_total, files + sub_files
                complete = complete and sub_complete
    except OSError:
        complete = False
    finally:
        os.close(fd)
    return total, files, complete


def measure(folders: Iterable[Path], holder: int | None = None) -> Usage:
    """Space allocated (st_blocks) and inodes under ``folders`` (symlinks not followed,
    hard links once), plus deleted files the process tree of ``holder`` keeps open."""
    seen: set[tuple[int, int]] = set()
    budget = [_MAX_WALK_ENTRIES]
    total = files = 0
    complete = True
    for folder in folders:
        try:
            fd = os.open(folder, _DIR_FLAGS)
        except OSError:
            complete = False
            continue
        sub_total, sub_files, sub_complete = _walk(fd, seen, budget)
        total, files, complete = total + sub_total, files + sub_files, complete and sub_complete
    if holder is not None:
        held, held_files = _deleted_but_open(holder, seen)
        total, files = total + held, files + held_files
    return Usage(total, files, complete)


def _deleted_but_open(root_pid: int, seen: set[tuple[int, int]]) -> tuple[int, int]:
    """Blocks of files the processes below ``root_pid`` hold open after deleting them
    (invisible to a walk, yet taking the space until they exit)."""
    parents: dict[int, int] = {}
    try:
        names = os.listdir("/proc")
    except OSError:
        return 0, 0
    for name in names:
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat", encoding="ascii", errors="replace") as fh:
                    parents[int(name)] = int(fh.read().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
    tree = {root_pid}
    grew = True
    while grew:
        grew = False
        for pid, parent in parents.items():
            if parent in tree and pid not in tree:
                tree.add(pid)
                grew = True
    total = files = 0
    for pid in tree:
        try:
            fds = os.listdir(f"/proc/{pid}/fd")
        except OSError:
            continue
        for fd in fds:
            link = f"/proc/{pid}/fd/{fd}"
            try:
                if not os.readlink(link).endswith(" (deleted)"):
                    continue
                info = os.stat(link)
            except OSError:
                continue
            key = (info.st_dev, info.st_ino)
            if stat.S_ISREG(info.st_mode) and key not in seen:
                seen.add(key)
                files += 1
                total += getattr(info, "st_blocks", 0) * 512
    return total, files


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

    def _grown(self, now: Usage) -> Usage:
        return Usage(now.bytes - self._start_usage.bytes, now.files - self._start_usage.files,
                     now.complete and self._start_usage.complete)

    def _say(self) -> None:
        self.exceeded = (f"it wrote more than {self.budget.describe()} to the workspace and "
                         f"/tmp (the limit for one run)")

    async def watch(self, stop: Callable[[], None], holder: int | None = None) -> None:
        """Run until cancelled; calls ``stop`` once when the program (the process tree of
        ``holder``) is over its budget."""
        while True:
            await asyncio.sleep(self.interval)
            free = _free(self.folders)
            dropped = Usage(self._free_mark.bytes - free.bytes,
                            self._free_mark.files - free.files)
            if not self._over(dropped.bytes, dropped.files):
                continue
            grown = self._grown(await asyncio.to_thread(measure, self.folders, holder))
            # A folder that could not be read may hide the program's writes: then the
            # file systems' own numbers count as the program's.
            if self._over(grown.bytes, grown.files) or not grown.complete:
                self._say()
                stop()
                return
            # Something else on the machine used the space: count from here, less what
            # the program itself added, so the next check is not triggered by it again.
            self._free_mark = Usage(free.bytes + max(grown.bytes, 0),
                                    free.files + max(grown.files, 0))

    def finish(self) -> None:
        """After the program ended: was it over its budget at the end (blocking)?"""
        if self.exceeded is None:
            grown = self._grown(measure(self.folders))
            if self._over(grown.bytes, grown.files):
                self._say()
