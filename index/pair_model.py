"""The shipped pair model: a MiniLM cross-encoder on onnxruntime that reads two texts together."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import numpy as np
from tokenizers import Tokenizer

from tooldedup.dedup.errors import ConfigurationError
from tooldedup.index.onnx_embedder import cpu_session
from tooldedup.index.packaged_model import PackagedModel

__all__ = ["OnnxPairScorer", "load_pair_model", "pair_model_dir"]

# Two texts longer than this together are past 128 tokens whatever they hold.
_MAX_CHARS = 2_000


def pair_model_dir() -> Path:
    """The folder ``tooldedup.index.pair_model_files`` that holds the shipped pair model."""
    return Path(str(resources.files("tooldedup.index") / "pair_model_files"))


def load_pair_model(folder: Path | None = None) -> PackagedModel:
    """The manifest of a pair-model folder (default: the shipped one)."""
    return PackagedModel.load(pair_model_dir() if folder is None else folder)


class OnnxPairScorer:
    """The cross-encoder's logit that two texts ask for the same thing; no torch at run time."""

    def __init__(self, model: PackagedModel, *, threads: int = 2) -> None:
        if threads <= 0:
            raise ValueError("threads must be positive")
        model.verify()
        try:
            # Its threads would spin after each read on the cores the embedder and the
            # server need next: under load that doubled a semantic check's p99.
            self._session = cpu_session(model.onnx_path, threads, spinning=False)
            self._tokenizer = Tokenizer.from_file(str(model.tokenizer_path))
        except Exception as exc:  # onnxruntime and tokenizers raise their own types
            raise ConfigurationError(
                f"cannot load the pair model in {model.folder}: {exc}"
            ) from None
        inputs = {i.name for i in self._session.get_inputs()}
        if inputs != {"input_ids", "attention_mask", "token_type_ids"}:
            raise ConfigurationError(f"the pair model in {model.folder} takes {sorted(inputs)}")
        self._tokenizer.no_padding()
        self._tokenizer.no_truncation()
        self._max_tokens = model.max_seq_length
        self._model_id = model.model_id

    @classmethod
    def packaged(cls, *, threads: int = 2) -> OnnxPairScorer:
        """The shipped pair model, checksum verified."""
        return cls(load_pair_model(), threads=threads)

    @property
    def model_id(self) -> str:
        """A name that changes with the weights."""
        return self._model_id

    def score(self, first: str, second: str) -> float | None:
        """The logit for the two texts, or None when together they exceed what it reads."""
        # Texts this long are over the token limit whatever they hold; not tokenising them
        # keeps a hostile body from costing seconds.
        if len(first) + len(second) > _MAX_CHARS:
            return None
        # A fixed (sorted) order: the answer does not depend on which call came first.
        low, high = sorted((first, second))
        encoding = self._tokenizer.encode(low, high)
        if len(encoding.ids) > self._max_tokens:
            return None
        feed = {
            "input_ids": np.asarray([encoding.ids], dtype=np.int64),
            "attention_mask": np.asarray([encoding.attention_mask], dtype=np.int64),
            "token_type_ids": np.asarray([encoding.type_ids], dtype=np.int64),
        }
        return float(np.asarray(self._session.run(None, feed)[0]).reshape(-1)[0])
