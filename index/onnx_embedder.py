"""Embeddings from an ONNX BERT encoder on onnxruntime and tokenizers; no torch at run time."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np

# onnxruntime's import starts its telemetry, which writes a device id under ~/.cache; the
# service writes nothing but its database and cache folder. A caller's own setting wins.
os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")

import onnxruntime as ort
from tokenizers import Encoding, Tokenizer

from tooldedup.dedup.protocols import Vectors
from tooldedup.dedup.short_cache import ShortTextCache
from tooldedup.index.packaged_model import PackagedModel

__all__ = ["OnnxEmbedder", "cpu_session"]

# Texts of a usual length are remembered between the coverage test and the model call.
_CACHED_TEXT_CHARS = 4096


def cpu_session(onnx_path: Path, threads: int, *, spinning: bool = True) -> ort.InferenceSession:
    """An onnxruntime session on the CPU with ``threads`` threads per model call; without
    ``spinning`` its threads sleep as soon as a call ends."""
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    if not spinning:
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return ort.InferenceSession(str(onnx_path), options, providers=["CPUExecutionProvider"])


class OnnxEmbedder:
    """Mean-pooled, L2-normalised sentence vectors from onnxruntime."""

    def __init__(
        self,
        onnx_path: Path,
        tokenizer_path: Path,
        *,
        model_id: str,
        max_seq_length: int = 256,
        threads: int = 2,
    ) -> None:
        if threads <= 0 or max_seq_length <= 0:
            raise ValueError("threads and max_seq_length must be positive")
        self._session = cpu_session(onnx_path, threads)
        self._tokenizer = Tokenizer.from_file(str(tokenizer_path))
        self._tokenizer.no_padding()
        self._tokenizer.enable_truncation(max_seq_length)
        self._max_seq_length = max_seq_length
        self._model_id = model_id
        self._dims = int(self._session.get_outputs()[0].shape[-1])
        # The coverage test reads a text's tokens just before the model does: once for both.
        self._tokens = ShortTextCache(self._encode, maxsize=256, max_chars=_CACHED_TEXT_CHARS)

    @classmethod
    def packaged(cls, model: PackagedModel | None = None, *, threads: int = 2) -> OnnxEmbedder:
        """The shipped int8 MiniLM (or another manifest-described folder), checksum verified."""
        model = PackagedModel.load() if model is None else model
        model.verify()
        return cls(
            model.onnx_path,
            model.tokenizer_path,
            model_id=model.model_id,
            max_seq_length=model.max_seq_length,
            threads=threads,
        )

    @classmethod
    def exported(
        cls, model_dir: Path, cache_dir: Path, *, quantize: bool = True, threads: int = 2
    ) -> OnnxEmbedder:
        """A sentence-transformers folder exported to ONNX once into ``cache_dir`` (needs torch)."""
        from tooldedup.index.onnx_export import export_onnx

        path = export_onnx(model_dir, cache_dir, quantize)
        return cls(
            path,
            model_dir / "tokenizer.json",
            model_id=export_model_id(path, quantize),
            max_seq_length=max_seq_length(model_dir),
            threads=threads,
        )

    @property
    def model_id(self) -> str:
        """A name that changes with the weights and the quantisation."""
        return self._model_id

    @property
    def dims(self) -> int:
        """The vector size."""
        return self._dims

    @property
    def tokenizer(self) -> Tokenizer:
        """The tokenizer the model reads through (truncating at the model's input length)."""
        return self._tokenizer

    @property
    def max_seq_length(self) -> int:
        """How many tokens of a text the model reads, special tokens included."""
        return self._max_seq_length

    def tokens(self, text: str) -> Encoding:
        """The text's tokens without special tokens; past the model's input length, the
        rest are in the encoding's ``overflowing`` parts."""
        return self._tokens(text)

    def _encode(self, text: str) -> Encoding:
        return self._tokenizer.encode(text, add_special_tokens=False)

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Embed each text on its own: int8 activations are quantised per batch, so batching
        would make a text's vector depend on its neighbours."""
        rows = [self._embed_one(text) for text in texts]
        if not rows:
            return np.zeros((0, self._dims), dtype=np.float32)
        return np.stack(rows)

    def _embed_one(self, text: str) -> Vectors:
        # Truncated and framed by the special tokens, as ``encode`` would have made it.
        encoding = self._tokenizer.post_process(self._tokens(text))
        ids = np.asarray([encoding.ids], dtype=np.int64)
        mask = np.asarray([encoding.attention_mask], dtype=np.int64)
        feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        hidden = np.asarray(self._session.run(None, feed)[0][0], dtype=np.float32)
        pooled = hidden.mean(axis=0)
        norm = float(np.linalg.norm(pooled))
        result: Vectors = (pooled / (norm or 1.0)).astype(np.float32)
        return result


def export_model_id(path: Path, quantize: bool) -> str:
    """The id of an exported file: the backend and the file's fingerprinted name."""
    return f"onnx{'-int8' if quantize else ''}:{path.stem}"


def max_seq_length(model_dir: Path) -> int:
    """The sentence-transformers truncation length of ``model_dir`` (256 if unset)."""
    config = model_dir / "sentence_bert_config.json"
    if config.exists():
        return int(json.loads(config.read_text()).get("max_seq_length", 256))
    return 256
