"""Embeddings from an ONNX export of a sentence-transformers model; no torch at run time."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import onnxruntime as ort
from tokenizers import Tokenizer

from dedup.protocols import Vectors
from index.onnx_export import export_onnx

__all__ = ["OnnxEmbedder"]


class OnnxEmbedder:
    """Mean-pooled, L2-normalised sentence vectors from onnxruntime."""

    def __init__(
        self, model_dir: Path, cache_dir: Path, *, quantize: bool = True, threads: int = 2
    ) -> None:
        self._path = export_onnx(model_dir, cache_dir, quantize)
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        self._session = ort.InferenceSession(
            str(self._path), options, providers=["CPUExecutionProvider"]
        )
        self._tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        self._tokenizer.no_padding()
        self._tokenizer.enable_truncation(_max_length(model_dir))
        self._model_id = f"onnx{'-int8' if quantize else ''}:{self._path.stem}"

    @property
    def model_id(self) -> str:
        """The exported file's name, which changes with the weights and quantisation."""
        return self._model_id

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Embed each text on its own: int8 activations are quantised per batch, so batching
        would make a text's vector depend on its neighbours."""
        rows = [self._embed_one(text) for text in texts]
        if not rows:
            return np.zeros((0, 0), dtype=np.float32)
        return np.stack(rows)

    def _embed_one(self, text: str) -> Vectors:
        encoding = self._tokenizer.encode(text)
        ids = np.asarray([encoding.ids], dtype=np.int64)
        mask = np.asarray([encoding.attention_mask], dtype=np.int64)
        feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        hidden = np.asarray(self._session.run(None, feed)[0][0], dtype=np.float32)
        pooled = hidden.mean(axis=0)
        norm = float(np.linalg.norm(pooled))
        result: Vectors = (pooled / (norm or 1.0)).astype(np.float32)
        return result


def _max_length(model_dir: Path) -> int:
    config = model_dir / "sentence_bert_config.json"
    if config.exists():
        return int(json.loads(config.read_text()).get("max_seq_length", 256))
    return 256
