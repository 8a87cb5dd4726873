"""Prompt-prefix states on disk: the system prompt and tools are evaluated once, ever.

An agent's prompt starts with the same system block every time (instructions plus the tool
list, about 900 tokens), and a small CPU evaluates prompts at roughly 100 tokens a second:
evaluated afresh, that block alone delays every first answer of a new process by ~9 s.
llama.cpp can export its context state (the KV cache of the evaluated tokens, ~12 KB a token
for the bundled model), so the state after the block is saved once and loaded in a fraction
of a second by later processes; within a process the live KV cache already covers it.

Files are keyed by the model file (path, size, mtime), the context size, the llama.cpp
version and the prefix tokens; a file that fails to load is deleted and the prefix is
evaluated normally. At most ``MAX_FILES`` states are kept (least recently used go first).
"""

from __future__ import annotations

import contextlib
import ctypes
import hashlib
import logging
import os
import struct
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from llama_cpp import Llama

log = logging.getLogger(__name__)

MAX_FILES = 8
_MAGIC = b"DAPS1"


class PrefixStateCache:
    """Saves and restores the llama.cpp context state after a prompt prefix."""

    def __init__(self, folder: Path, model_path: Path, context_size: int) -> None:
        self.folder = folder
        try:
            stat = model_path.stat()
            identity = f"{model_path.resolve()}|{stat.st_size}|{stat.st_mtime_ns}"
        except OSError:
            identity = str(model_path)
        import llama_cpp

        self._model_key = hashlib.sha256(
            f"{identity}|{context_size}|{llama_cpp.__version__}".encode()).hexdigest()[:16]

    def _file(self, tokens: list[int]) -> Path:
        digest = hashlib.sha256(struct.pack(f"<{len(tokens)}i", *tokens)).hexdigest()[:24]
        return self.folder / f"{self._model_key}-{digest}.state"

    def restore(self, llama: Llama, tokens: list[int]) -> bool:
        """Load the state saved after exactly ``tokens``; False when there is none."""
        path = self._file(tokens)
        try:
            data = path.read_bytes()
        except OSError:
            return False
        try:
            self._apply(llama, tokens, data)
        except (ValueError, RuntimeError) as exc:
            log.info("prompt state %s unusable (%s); evaluating the prefix instead", path, exc)
            with contextlib.suppress(OSError):
                path.unlink()
            llama.reset()  # type: ignore[no-untyped-call]  # unannotated in llama_cpp
            return False
        with contextlib.suppress(OSError):
            os.utime(path)  # recently used: kept longest
        return True

    @staticmethod
    def _apply(llama: Llama, tokens: list[int], data: bytes) -> None:
        import llama_cpp

        header = len(_MAGIC) + 4
        if not data.startswith(_MAGIC) or len(data) < header:
            raise ValueError("not a prompt-state file")
        (count,) = struct.unpack_from("<I", data, len(_MAGIC))
        stored = list(struct.unpack_from(f"<{count}i", data, header))
        if stored != tokens:
            raise ValueError("the file holds another prefix")
        state = data[header + 4 * count:]
        buffer = (ctypes.c_uint8 * len(state)).from_buffer_copy(state)
        if llama_cpp.llama_state_set_data(llama.ctx, buffer, len(state)) != len(state):
            raise RuntimeError("llama.cpp rejected the state")
        llama.input_ids[:count] = tokens
        llama.n_tokens = count
        # The logits of the last prefix token were not saved: the next generation replays it.
        llama._requires_eval = True

    def save(self, llama: Llama, tokens: list[int]) -> None:
        """Store the current state, which must hold exactly ``tokens``."""
        import llama_cpp

        if llama.n_tokens != len(tokens):
            return
        size = llama_cpp.llama_state_get_size(llama.ctx)
        buffer = (ctypes.c_uint8 * int(size))()
        written = int(llama_cpp.llama_state_get_data(llama.ctx, buffer, size))
        path = self._file(tokens)
        tmp = path.with_suffix(f".tmp{os.getpid()}")
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            with tmp.open("wb") as handle:
                handle.write(_MAGIC + struct.pack("<I", len(tokens)))
                handle.write(struct.pack(f"<{len(tokens)}i", *tokens))
                handle.write(memoryview(buffer)[:written])
            tmp.replace(path)  # readers never see half a file
        except OSError as exc:
            log.info("could not save the prompt state (%s); it is only a speed-up", exc)
            with contextlib.suppress(OSError):
                tmp.unlink()
            return
        self._prune()

    def _prune(self) -> None:
        try:
            files = sorted(self.folder.glob("*.state"), key=lambda p: p.stat().st_mtime,
                           reverse=True)
        except OSError:
            return
        for old in files[MAX_FILES:]:
            with contextlib.suppress(OSError):
                old.unlink()
