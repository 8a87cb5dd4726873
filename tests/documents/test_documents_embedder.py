"""The NumPy MiniLM against sentence-transformers' own output for the same model."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np


def test_vectors_match_sentence_transformers(embedder) -> None:
    # minilm_reference.json: SentenceTransformer(<the wheel's model dir>).encode(texts,
    # normalize_embeddings=True) with sentence-transformers 6.3.0 and PyTorch 2.13 (CPU).
    reference = json.loads((Path(__file__).parent / "minilm_reference.json").read_text())
    vectors = embedder.embed(reference["texts"])
    expected = np.array(reference["vectors"], dtype=np.float32)
    assert vectors.shape == expected.shape == (5, 384)
    assert np.abs(vectors - expected).max() < 1e-4
    assert np.allclose((vectors * expected).sum(1), 1.0, atol=1e-5)


def test_batches_do_not_change_a_vector(embedder) -> None:
    texts = ["short", "a much longer sentence about the warranty of a washing machine " * 5]
    together = embedder.embed(texts)
    alone = np.vstack([embedder.embed([t]) for t in texts])
    assert np.abs(together - alone).max() < 1e-5  # padding is masked out


def test_meaning_not_only_words(embedder) -> None:
    cat, feline, physics = embedder.embed(["The cat sat on the mat.",
                                           "A kitten rested on the rug.",
                                           "Quarks are held together by gluons."])
    assert cat @ feline > cat @ physics + 0.3
