"""Embeddings through sentence-transformers on torch: the fallback path."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from tooldedup.dedup.protocols import Vectors

__all__ = ["SentenceTransformerEmbedder"]


class SentenceTransformerEmbedder:
    """Any sentence-transformers model directory, on the CPU."""

    def __init__(self, model_dir: Path) -> None:
        from sentence_transformers import SentenceTransformer

        self._model = SentenceTransformer(str(model_dir), device="cpu")
        self._model_id = f"torch:{model_dir.name}"
        # Renamed in sentence-transformers 6; the old name warns there.
        dimension = (
            getattr(self._model, "get_embedding_dimension", None)
            or self._model.get_sentence_embedding_dimension
        )
        self._dims = int(dimension() or 0)

    @property
    def model_id(self) -> str:
        """The backend and model directory name."""
        return self._model_id

    @property
    def dims(self) -> int:
        """The vector size the model declares."""
        return self._dims

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Embed ``texts`` in one batch, normalised."""
        if not texts:
            return np.zeros((0, self._dims), dtype=np.float32)
        vectors = self._model.encode(
            list(texts), normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False
        )
        return np.asarray(vectors, dtype=np.float32)
