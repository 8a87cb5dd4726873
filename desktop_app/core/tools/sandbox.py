"""The workspace sandbox: every file tool resolves paths through ``Workspace``.

A path the model gives is *relative to the workspace folder the user chose*. It is refused
with ``SandboxViolationError`` when it is absolute, contains ``..``, or resolves (following
every symlink, in the file itself or in any parent folder) to a place outside the folder.
The check is done on the fully resolved path with ``Path.resolve`` and ``is_relative_to``,
so a symlink created *inside* the workspace that points outside is refused like ``..``.

Files are then opened without a resolve-then-open race: ``open_fd`` walks the checked path
one component at a time from a descriptor of the workspace folder (``dir_fd``) with
``O_NOFOLLOW``, so a symlink swapped in after the check is refused, not followed. Only
regular files with one link are opened (a FIFO or device would block or leak; a hard link
may be a file outside), and reads never block (``O_NONBLOCK``).
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Iterator
from pathlib import Path, PurePosixPath, PureWindowsPath

from desktop_app.core.errors import SandboxViolationError, ToolError

#: Largest file the read tools load (bytes); bigger files are read partially or refused.
MAX_READ_BYTES = 2_000_000
#: Largest text the write tool accepts (characters).
MAX_WRITE_CHARS = 1_000_000

_HINT = "Use a path relative to the workspace folder, for example 'notes/todo.txt'."


class Workspace:
    """A folder the user chose; the only place file tools may read or write."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        raw = Path(root).expanduser()
        try:
            resolved = raw.resolve(strict=True)
        except (OSError, RuntimeError) as exc:
            raise ToolError(f"The workspace folder {raw} does not exist.",
                            hint="Choose an existing folder in Settings → Tools.") from exc
        if not resolved.is_dir():
            raise ToolError(f"The workspace {raw} is not a folder.",
                            hint="Choose a folder in Settings → Tools.")
        self.root = resolved

    def __repr__(self) -> str:
        return f"Workspace({str(self.root)!r})"

    # --- path resolution ----------------------------------------------------------------------
    def resolve(self, path: str, *, must_exist: bool = True) -> Path:
        """The absolute, symlink-free path for workspace-relative ``path``, or refuse it.

        ``must_exist=False`` is for writing new files: the missing tail is allowed, but every
        existing parent is still resolved, so a symlinked parent folder that points outside
        is refused.
        """
        text = (path or ".").strip() or "."
        if "\x00" in text:
            raise SandboxViolationError(f"The path {text!r} contains a NUL character.", hint=_HINT)
        posix, windows = PurePosixPath(text), PureWindowsPath(text)
        if posix.is_absolute() or windows.is_absolute() or windows.drive or text.startswith("~"):
            raise SandboxViolationError(
                f"Refused '{text}': absolute paths are not allowed; tools only see the "
                f"workspace folder.", hint=_HINT)
        if ".." in posix.parts or ".." in windows.parts:
            raise SandboxViolationError(
                f"Refused '{text}': '..' would leave the workspace folder.", hint=_HINT)
        candidate = self.root / text
        try:
            resolved = candidate.resolve(strict=must_exist)
        except FileNotFoundError:
            # Before saying "not found", make sure the existing part does not already escape.
            self._check_inside(text, candidate.resolve(strict=False))
            raise ToolError(f"'{text}' does not exist in the workspace.",
                            hint="List the folder to see which files exist.") from None
        except (OSError, RuntimeError) as exc:  # symlink loops, permission problems
            raise ToolError(f"'{text}' cannot be resolved: {exc}.", hint=_HINT) from exc
        self._check_inside(text, resolved)
        return resolved

    def _check_inside(self, text: str, resolved: Path) -> None:
        if not resolved.is_relative_to(self.root):
            raise SandboxViolationError(
                f"Refused '{text}': it leads outside the workspace folder (through a symbolic "
                f"link); tools may only use files inside {self.root}.", hint=_HINT)

    def relative(self, path: Path) -> str:
        """``path`` (inside the workspace) as the POSIX-style relative text shown to the model."""
        rel = path.relative_to(self.root).as_posix()
        return rel or "."

    def is_inside(self, path: Path) -> bool:
        """Whether ``path`` (following symlinks) stays inside the workspace."""
        try:
            return path.resolve(strict=True).is_relative_to(self.root)
        except (OSError, RuntimeError):
            return False

    # --- safe file operations -----------------------------------------------------------------
    def open_fd(self, path: str, flags: int, *, create: bool = False) -> int:
        """A descriptor of workspace file ``path`` opened with ``flags``, race-free.

        ``create``: missing parent folders are made (inside the workspace) and the file may
        be new. Raises ``SandboxViolationError`` for symlinks met while opening and
        ``ToolError`` for anything that is not a regular file.
        """
        target = self.resolve(path, must_exist=not create)
        parts = target.relative_to(self.root).parts
        if not parts:
            raise ToolError(f"'{path}' is a folder; give a file name.", hint=_HINT)
        nofollow = getattr(os, "O_NOFOLLOW", 0)
        directory = getattr(os, "O_DIRECTORY", 0)
        current = os.open(self.root, os.O_RDONLY | directory)
        try:
            for part in parts[:-1]:
                try:
                    following = os.open(part, os.O_RDONLY | directory | nofollow, dir_fd=current)
                except FileNotFoundError:
                    if not create:
                        raise
                    with contextlib.suppress(FileExistsError):
                        os.mkdir(part, 0o755, dir_fd=current)
                    following = os.open(part, os.O_RDONLY | directory | nofollow, dir_fd=current)
                os.close(current)
                current = following
            fd = os.open(parts[-1], flags | nofollow | os.O_NONBLOCK, 0o644, dir_fd=current)
        except OSError as exc:
            raise self._open_error(path, exc) from None
        finally:
            os.close(current)
        info = os.fstat(fd)
        problem = None
        if not stat.S_ISREG(info.st_mode):
            problem = ("is a folder" if stat.S_ISDIR(info.st_mode)
                       else "is not a regular file (a pipe, socket or device)")
        elif info.st_nlink > 1:
            problem = "has several hard links (it may be a file outside the workspace)"
        if problem is not None:
            os.close(fd)
            raise ToolError(f"'{path}' {problem}; file tools only use regular files.",
                            hint=_HINT)
        os.set_blocking(fd, True)
        return fd

    def _open_error(self, path: str, exc: OSError) -> Exception:
        import errno

        if exc.errno in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):
            return SandboxViolationError(
                f"Refused '{path}': a symbolic link appeared while opening it; tools only "
                f"use files inside {self.root}.", hint=_HINT)
        if exc.errno == errno.ENXIO:  # a FIFO with no reader, opened for writing
            return ToolError(f"'{path}' is not a regular file (a pipe, socket or device); "
                             "file tools only use regular files.", hint=_HINT)
        if isinstance(exc, FileNotFoundError):
            return ToolError(f"'{path}' does not exist in the workspace.",
                             hint="List the folder to see which files exist.")
        if isinstance(exc, IsADirectoryError):
            return ToolError(f"'{path}' is a folder, not a file.", hint="List it instead.")
        return ToolError(f"'{path}' could not be opened: {exc.strerror}.", hint=_HINT)

    def read_bytes(self, path: str, *, max_bytes: int = MAX_READ_BYTES) -> tuple[bytes, bool]:
        """At most ``max_bytes`` of a workspace file, and whether there was more."""
        with os.fdopen(self.open_fd(path, os.O_RDONLY), "rb") as handle:
            data = handle.read(max_bytes + 1)
        return data[:max_bytes], len(data) > max_bytes

    def read_text(self, path: str, *, max_bytes: int = MAX_READ_BYTES) -> tuple[str, bool]:
        """Text of a workspace file (at most ``max_bytes``) and whether it was cut short."""
        if self.resolve(path).is_dir():
            raise ToolError(f"'{path}' is a folder, not a file.", hint="List it instead.")
        data, truncated = self.read_bytes(path, max_bytes=max_bytes)
        if b"\x00" in data[:8192]:
            raise ToolError(f"'{path}' looks like a binary file, not text.",
                            hint="Only text files can be read; use read_document for PDFs.")
        return data.decode("utf-8", errors="replace"), truncated

    def write_text(self, path: str, content: str, *, append: bool = False) -> Path:
        """Write ``content`` to a workspace file, creating parent folders inside the workspace."""
        if len(content) > MAX_WRITE_CHARS:
            raise ToolError(f"The text is {len(content):,} characters; the limit is "
                            f"{MAX_WRITE_CHARS:,}.", hint="Split it into several files.")
        target = self.resolve(path, must_exist=False)
        if target == self.root or target.is_dir():
            raise ToolError(f"'{path}' is a folder; give a file name.", hint=_HINT)
        # Truncate only after the checks: O_TRUNC in open would empty a file it then refuses.
        flags = os.O_WRONLY | os.O_CREAT | (os.O_APPEND if append else 0)
        fd = self.open_fd(path, flags, create=True)
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            if not append:
                handle.truncate(0)
            handle.write(content)
        return target

    def walk(self, start: str = ".", *, max_depth: int = 20) -> Iterator[Path]:
        """Every file and folder below ``start`` that resolves inside the workspace.

        Symlinks are never followed into folders, and symlinked files pointing outside are
        skipped, so listing and searching cannot leak names or content from elsewhere.
        """
        base = self.resolve(start)
        base_depth = len(base.parts)
        for dirpath, dirnames, filenames in os.walk(base, followlinks=False):
            current = Path(dirpath)
            dirnames.sort()
            if len(current.parts) - base_depth >= max_depth:
                dirnames.clear()
            for name in dirnames + sorted(filenames):
                entry = current / name
                if entry.is_symlink() and not self.is_inside(entry):
                    continue
                yield entry
