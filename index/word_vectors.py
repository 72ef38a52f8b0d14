"""Single-word vectors the shipped model computed ahead of time, for the verifier's synonyms.

    python -m tooldedup.index.word_vectors --out index/model

The verifier asks the cosine of two words (is "buy" put for "purchase"?). A word is one model
call of about a millisecond, most of it the call's fixed cost, so a check with a new word paid
one or two of them. Every whole word of the model's own vocabulary (its tokenizer's, about 22k)
is embedded once here, through the same embedder and the same one-text-per-call path the
service uses, and kept as float16 (the cosines move by about 1e-4). A word outside the table
is embedded as before. The table names the model it came from; any other model ignores it.
"""

from __future__ import annotations

import argparse
import json
import re
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from tooldedup.dedup.protocols import Embedder, Vectors
from tooldedup.index.packaged_model import file_sha256, packaged_model_dir

__all__ = ["WORD_VECTORS_NAME", "WordVectors", "build", "main"]

WORD_VECTORS_NAME = "word-vectors.json"
_VECTORS_FILE = "word-vectors-f16.npy"
_WORDS_FILE = "word-vectors.txt"
_WORD = re.compile(r"[a-z]{2,}")


class WordVectors:
    """The table: a word's vector, or None for a word it does not hold."""

    def __init__(self, model_id: str, words: Sequence[str], vectors: np.ndarray) -> None:
        if len(words) != len(vectors):
            raise ValueError("one vector per word")
        self.model_id = model_id
        self._rows = {word: row for row, word in enumerate(words)}
        self._vectors = vectors

    def __len__(self) -> int:
        return len(self._rows)

    def get(self, word: str) -> np.ndarray | None:
        """The word's vector (float32), if the table holds it."""
        row = self._rows.get(word)
        return None if row is None else self._vectors[row].astype(np.float32)

    @classmethod
    def load(cls, folder: Path | None = None, *, model_id: str | None = None) -> WordVectors | None:
        """The table shipped in ``folder`` (default: the packaged model's), or None if it is
        missing, damaged, or made by a model other than ``model_id`` (when given)."""
        folder = packaged_model_dir() if folder is None else folder
        try:
            meta = json.loads((folder / WORD_VECTORS_NAME).read_text(encoding="utf-8"))
            made_by, dims = str(meta["model_id"]), int(meta["dims"])
            if model_id is not None and made_by != model_id:
                return None
            words_path, vectors_path = folder / meta["words"], folder / meta["vectors"]
            # The words are checked at every start; the vectors (17 MB) by the package's
            # tests, and here by their shape, type and lengths.
            if file_sha256(words_path) != meta["words_sha256"]:
                return None
            words = words_path.read_text(encoding="utf-8").split("\n")
            # Read whole: a row of a memory-mapped array costs tens of microseconds.
            vectors = np.load(vectors_path, allow_pickle=False)
            if (
                not isinstance(vectors, np.ndarray)
                or vectors.dtype != np.float16
                or vectors.shape != (len(words), dims)
            ):
                return None
            # Unit vectors, as the embedder gives them: a cosine stays in [-1, 1].
            norms = np.linalg.norm(vectors.astype(np.float32), axis=1)
            if not np.all(np.abs(norms - 1.0) < 1e-2):
                return None
        except Exception:  # any damage means no table, never a service that cannot start
            return None
        return cls(made_by, words, vectors)


def vocabulary_words(tokenizer_path: Path) -> list[str]:
    """The whole words (two or more lowercase letters) of a WordPiece tokenizer's vocabulary."""
    vocab = json.loads(tokenizer_path.read_text(encoding="utf-8"))["model"]["vocab"]
    return sorted(word for word in vocab if _WORD.fullmatch(word))


def build(out: Path, embedder: Embedder, words: Sequence[str]) -> dict[str, object]:
    """Embed ``words`` one per call and write the table into ``out``; return its header."""
    rows: list[Vectors] = [embedder.embed([word])[0] for word in words]
    vectors = np.stack(rows).astype(np.float16)
    np.save(out / _VECTORS_FILE, vectors, allow_pickle=False)
    (out / _WORDS_FILE).write_text("\n".join(words), encoding="utf-8")
    meta: dict[str, object] = {
        "model_id": embedder.model_id,
        "dims": int(vectors.shape[1]),
        "words": _WORDS_FILE,
        "words_sha256": file_sha256(out / _WORDS_FILE),
        "vectors": _VECTORS_FILE,
        "vectors_sha256": file_sha256(out / _VECTORS_FILE),
    }
    (out / WORD_VECTORS_NAME).write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
    return meta


def main(argv: Sequence[str] | None = None) -> int:
    """Build the table for the shipped model into ``--out``."""
    from tooldedup.index.onnx_embedder import OnnxEmbedder
    from tooldedup.index.packaged_model import PackagedModel

    parser = argparse.ArgumentParser(prog="python -m tooldedup.index.word_vectors")
    parser.add_argument("--out", type=Path, default=packaged_model_dir())
    args = parser.parse_args(argv)
    model = PackagedModel.load()
    embedder = OnnxEmbedder.packaged(model, threads=2)
    meta = build(args.out, embedder, vocabulary_words(model.tokenizer_path))
    print(json.dumps(meta, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
