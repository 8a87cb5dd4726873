"""What a GGUF file is, read from its header without loading the weights.

The header holds the model's metadata (architecture, layers, attention heads, trained
context, chat template) and one record per tensor (shape and type); the weights follow.
``gguf.GGUFReader`` (llama.cpp's own package) turns every one of the tokenizer's 151,936
vocabulary strings into a numpy array: 7.8 s for the bundled model's header on these
machines, too slow to list a folder of models. This reader walks the same format (spec:
ggml/docs/gguf.md) with ``struct`` over a memory map and skips what it does not need.
"""

from __future__ import annotations

import mmap
import stat
import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

_MAGIC = b"GGUF"
_SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?",
            10: "<Q", 11: "<q", 12: "<d"}
_STRING, _ARRAY = 8, 9
#: Arrays longer than this are skipped, not kept (the tokenizer's vocabulary and merges).
_KEEP_ARRAY = 64
#: Limits no real model comes near (tens of keys, at most a few thousand tensors, arrays
#: of arrays one level deep, splits in the tens): a hostile header beyond them is refused
#: at once instead of being walked for minutes or recursing until Python gives up.
MAX_KEYS = 1 << 16
MAX_TENSORS = 1 << 20
MAX_ARRAY_DEPTH = 4
MAX_SPLIT_PARTS = 999
#: general.file_type → the quantisation people know it by (llama.cpp's LLAMA_FTYPE_*).
FILE_TYPES = {
    0: "F32", 1: "F16", 2: "Q4_0", 3: "Q4_1", 7: "Q8_0", 8: "Q5_0", 9: "Q5_1", 10: "Q2_K",
    11: "Q3_K_S", 12: "Q3_K_M", 13: "Q3_K_L", 14: "Q4_K_S", 15: "Q4_K_M", 16: "Q5_K_S",
    17: "Q5_K_M", 18: "Q6_K", 19: "IQ2_XXS", 20: "IQ2_XS", 21: "Q2_K_S", 22: "IQ3_XS",
    23: "IQ3_XXS", 24: "IQ1_S", 25: "IQ4_NL", 26: "IQ3_S", 27: "IQ3_M", 28: "IQ2_S",
    29: "IQ2_M", 30: "IQ4_XS", 31: "IQ1_M", 32: "BF16", 36: "TQ1_0", 37: "TQ2_0",
}


class GgufError(ValueError):
    """The file is not a GGUF model this reader understands; the message says why."""


@dataclass(frozen=True)
class GgufInfo:
    """A model's facts from its GGUF header."""

    path: Path
    file_size: int
    version: int
    metadata: dict[str, Any]
    parameters: int
    tensor_bytes: int
    #: Other files of a split model ("-00002-of-00003.gguf"), in order, this one excluded.
    split_parts: list[Path] = field(default_factory=list)

    def _arch(self, key: str, default: Any = None) -> Any:
        return self.metadata.get(f"{self.architecture}.{key}", default)

    @property
    def architecture(self) -> str:
        return str(self.metadata.get("general.architecture", "unknown"))

    @property
    def name(self) -> str:
        return str(self.metadata.get("general.name") or self.path.stem)

    @property
    def layers(self) -> int:
        return int(self._arch("block_count", 0))

    @property
    def heads(self) -> int:
        return _first(self._arch("attention.head_count", 0))

    @property
    def kv_heads(self) -> int:
        return _first(self._arch("attention.head_count_kv", self.heads)) or self.heads

    @property
    def embedding_length(self) -> int:
        return int(self._arch("embedding_length", 0))

    @property
    def key_length(self) -> int:
        """Width of one attention head's key (and value) vectors."""
        default = self.embedding_length // self.heads if self.heads else 0
        return int(self._arch("attention.key_length", default))

    @property
    def value_length(self) -> int:
        return int(self._arch("attention.value_length", self.key_length))

    @property
    def context_length(self) -> int:
        """The context the model was trained for."""
        return int(self._arch("context_length", 0))

    @property
    def vocabulary_size(self) -> int:
        return int(self.metadata.get("tokenizer.ggml.tokens.count", 0))

    @property
    def quantisation(self) -> str:
        file_type = self.metadata.get("general.file_type")
        return FILE_TYPES.get(int(file_type), f"type {file_type}") if file_type is not None \
            else "unknown"

    @property
    def chat_template(self) -> str:
        return str(self.metadata.get("tokenizer.chat_template") or "")

    @property
    def total_size(self) -> int:
        """Bytes on disk, all parts of a split model included."""
        return self.file_size + sum(p.stat().st_size for p in self.split_parts if p.exists())


def _first(value: Any) -> int:
    """Per-layer values (some architectures list one per layer) as the largest one."""
    if isinstance(value, list):
        return int(max(value)) if value else 0
    return int(value or 0)


class _Cursor:
    def __init__(self, data: mmap.mmap) -> None:
        self.data, self.at = data, 0

    def take(self, fmt: str) -> Any:
        try:
            (value,) = struct.unpack_from(fmt, self.data, self.at)
        except struct.error:
            raise GgufError("the file ends inside its header (cut short?)") from None
        self.at += struct.calcsize(fmt)
        return value

    def string(self) -> str:
        length = self.take("<Q")
        if length > len(self.data) - self.at:
            raise GgufError("a header string runs past the end of the file")
        raw = self.data[self.at:self.at + length]
        self.at += length
        return raw.decode("utf-8", errors="replace")

    def skip_string(self) -> None:
        length = self.take("<Q")
        self.at += length
        if self.at > len(self.data):
            raise GgufError("a header string runs past the end of the file")

    def value(self, kind: int, key: str, metadata: dict[str, Any], depth: int = 0) -> Any:
        if kind in _SCALARS:
            return self.take(_SCALARS[kind])
        if kind == _STRING:
            return self.string()
        if kind != _ARRAY:
            raise GgufError(f"unknown value type {kind} for '{key}'")
        if depth >= MAX_ARRAY_DEPTH:
            raise GgufError(f"'{key}' nests arrays more than {MAX_ARRAY_DEPTH} deep")
        element, count = self.take("<I"), self.take("<Q")
        metadata[f"{key}.count"] = count
        if count <= _KEEP_ARRAY:
            return [self.value(element, key, {}, depth + 1) for _ in range(count)]
        if element in _SCALARS:
            self.at += struct.calcsize(_SCALARS[element]) * count
        elif element == _STRING:
            for _ in range(count):
                self.skip_string()
        else:
            raise GgufError(f"nested arrays in '{key}' are not supported")
        return None


def read_gguf(path: str | Path) -> GgufInfo:
    """The header of the GGUF file at ``path``; raises ``GgufError`` (or ``OSError``)."""
    path = Path(path)
    if not stat.S_ISREG(path.stat().st_mode):
        # Opening a FIFO named *.gguf blocks until someone writes to it: for ever.
        raise GgufError(f"{path.name} is not a regular file")
    with path.open("rb") as handle:
        size = path.stat().st_size
        if size < 24:
            raise GgufError(f"{path.name} is too small to be a GGUF model")
        with mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as data:
            if data[:4] != _MAGIC:
                raise GgufError(f"{path.name} is not a GGUF file (it does not start with GGUF)")
            cursor = _Cursor(data)
            cursor.at = 4
            version = cursor.take("<I")
            if version < 2:
                raise GgufError(f"{path.name} is GGUF version {version}; only 2 and 3 are read")
            tensor_count, kv_count = cursor.take("<Q"), cursor.take("<Q")
            if kv_count > MAX_KEYS or tensor_count > MAX_TENSORS:
                raise GgufError(f"{path.name} claims {kv_count:,} metadata keys and "
                                f"{tensor_count:,} tensors, more than any model has: the "
                                "header is damaged or made to hang readers")
            metadata: dict[str, Any] = {}
            for _ in range(kv_count):
                key = cursor.string()
                metadata[key] = cursor.value(cursor.take("<I"), key, metadata)
            parameters = 0
            for _ in range(tensor_count):
                cursor.skip_string()
                dims = [cursor.take("<Q") for _ in range(cursor.take("<I"))]
                cursor.take("<I")  # type
                cursor.take("<Q")  # offset
                count = 1
                for dim in dims:
                    count *= dim
                parameters += count
            alignment = int(metadata.get("general.alignment", 32)) or 32
            data_start = -(-cursor.at // alignment) * alignment
    return GgufInfo(path=path, file_size=size, version=version, metadata=metadata,
                    parameters=parameters, tensor_bytes=max(size - data_start, 0),
                    split_parts=_other_parts(path, metadata))


def _other_parts(path: Path, metadata: dict[str, Any]) -> list[Path]:
    """The sibling files of a split model, named as llama.cpp's gguf-split names them."""
    count = metadata.get("split.count", 0)
    if not isinstance(count, int) or count < 2:
        return []
    import re

    match = re.match(r"^(.*)-(\d{5})-of-(\d{5})\.gguf$", path.name)
    if not match or int(match.group(3)) != count or count > MAX_SPLIT_PARTS:
        return []  # the name and the header disagree: not a split this reader trusts
    stem = match.group(1)
    return [path.with_name(f"{stem}-{n:05d}-of-{count:05d}.gguf")
            for n in range(1, count + 1) if n != int(match.group(2))]
