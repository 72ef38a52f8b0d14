"""Issue 9's learned-verifier candidate, measured: a cross-encoder fine-tuned here from the
packaged MiniLM on the calibration half's free-text pairs, scored on the held-out half.

Only the pairs whose meaning is in question take part: ``paraphrase`` (duplicate) against
``different`` and ``hard_negative`` (distinct), each reduced to the free-text field that
differs. The split is the one ``tooldedup calibrate`` uses: pairs built from one hand-written
entry share a ``group`` and fall on one side, so no held-out text is seen in training (any
training pair that still shares a text with a held-out pair is dropped as well).

    python -m benchmarks.cross_encoder      # needs the torch extra; ~30 minutes on 2 cores

Beside ranking measures it reports what the model would do as a verifier: the held-out pairs
through the funnel with its defaults, then every match but an exact one overturned when the
model's logit (both orders averaged) is under a bar.
"""

from __future__ import annotations

import argparse
import json
import random
import time
from pathlib import Path
from typing import Any

from tooldedup.calibration.command import held_out

RESULTS = Path(__file__).parent / "results"
PAIRS = Path(__file__).parent.parent / "calibration" / "data" / "pairs.jsonl"
KINDS = {"paraphrase": 1.0, "different": 0.0, "hard_negative": 0.0}
Pair = tuple[str, str, float, str, str]
# Logits under which the cross-encoder would overturn a funnel match, as a verifier would.
VETO_LOGITS = (-2.0, -1.0, 0.0)


def _texts(a: Any, b: Any, path: str = "") -> list[tuple[str, str]]:
    """The differing free-text leaves of two argument trees (strings of 3+ words)."""
    if isinstance(a, dict) and isinstance(b, dict):
        found = []
        for key in sorted(a.keys() & b.keys()):
            found += _texts(a[key], b[key], f"{path}.{key}")
        return found
    if isinstance(a, str) and isinstance(b, str) and a != b and len(a.split()) >= 3:
        return [(a, b)]
    return []


def load() -> tuple[list[Pair], list[Pair]]:
    """(text a, text b, label, kind) for training and for the held-out half."""
    train: list[Pair] = []
    test: list[Pair] = []
    for line in PAIRS.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        if row["kind"] not in KINDS:
            continue
        texts = _texts(row["a"], row["b"])
        if len(texts) != 1:
            continue
        item = (texts[0][0], texts[0][1], KINDS[row["kind"]], row["kind"], row["id"])
        (test if held_out(row.get("group") or row["id"]) else train).append(item)
    seen = {t for a, b, *_ in test for t in (a, b)}
    clean = [p for p in train if p[0] not in seen and p[1] not in seen]
    return clean, test


def _auc(scores: list[float], labels: list[float]) -> float:
    pos = [s for s, y in zip(scores, labels, strict=True) if y]
    neg = [s for s, y in zip(scores, labels, strict=True) if not y]
    wins = sum((p > n) + 0.5 * (p == n) for p in pos for n in neg)
    return wins / (len(pos) * len(neg))


def _threshold_at(scores: list[float], labels: list[float], max_fpr: float) -> float:
    """The lowest threshold whose false-positive rate on these pairs stays at ``max_fpr``."""
    negatives = sorted((s for s, y in zip(scores, labels, strict=True) if not y), reverse=True)
    allowed = int(max_fpr * len(negatives))
    return negatives[allowed] + 1e-9 if allowed < len(negatives) else -1e9


def run(layers: int, epochs: int, seed: int) -> dict[str, Any]:
    """Train on the clean training pairs; report on the held-out half."""
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    from tooldedup.index.source_model import source_model_dir

    torch.manual_seed(seed)
    torch.set_num_threads(2)
    rng = random.Random(seed)
    train, test = load()
    model_dir = source_model_dir()
    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModelForSequenceClassification.from_pretrained(model_dir, num_labels=1)
    model.bert.encoder.layer = model.bert.encoder.layer[:layers]
    model.config.num_hidden_layers = layers
    optimiser = torch.optim.AdamW(model.parameters(), lr=5e-5, weight_decay=0.01)
    loss_fn = torch.nn.BCEWithLogitsLoss()
    # Both orders: the verifier must not care which call came first.
    examples = [(a, b, y) for a, b, y, *_ in train] + [(b, a, y) for a, b, y, *_ in train]
    started = time.perf_counter()
    model.train()
    for _ in range(epochs):
        rng.shuffle(examples)
        for start in range(0, len(examples), 16):
            batch = examples[start : start + 16]
            encoded = tokenizer(
                [a for a, _, _ in batch],
                [b for _, b, _ in batch],
                padding=True,
                truncation=True,
                max_length=128,
                return_tensors="pt",
            )
            predicted = model(**encoded).logits.squeeze(-1)
            loss = loss_fn(predicted, torch.tensor([y for _, _, y in batch]))
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
    trained = time.perf_counter() - started
    model.eval()

    def logits(firsts: list[str], seconds: list[str]) -> list[float]:
        encoded = tokenizer(
            firsts, seconds, padding=True, truncation=True, max_length=128, return_tensors="pt"
        )
        values: list[float] = model(**encoded).logits.squeeze(-1).tolist()
        return values

    def score(pairs: list[Pair]) -> list[float]:
        """The mean of both orders' logits."""
        out: list[float] = []
        with torch.no_grad():
            for start in range(0, len(pairs), 32):
                firsts = [p[0] for p in pairs[start : start + 32]]
                seconds = [p[1] for p in pairs[start : start + 32]]
                forward, backward = logits(firsts, seconds), logits(seconds, firsts)
                out += [(x + y) / 2 for x, y in zip(forward, backward, strict=True)]
        return out

    train_scores = score(train)
    threshold = _threshold_at(train_scores, [p[2] for p in train], 0.02)
    test_scores = score(test)
    labels = [p[2] for p in test]
    kinds = [p[3] for p in test]
    pair_seconds = []
    with torch.no_grad():
        for first, second, *_ in test[:200]:
            started = time.perf_counter()
            logits([first, second], [second, first])
            pair_seconds.append(time.perf_counter() - started)
    pair_seconds.sort()

    def share(kind: str) -> float:
        picked = [s >= threshold for s, k in zip(test_scores, kinds, strict=True) if k == kind]
        return sum(picked) / len(picked) if picked else float("nan")

    at_two = _threshold_at(test_scores, labels, 0.02)
    pos = [s for s, y in zip(test_scores, labels, strict=True) if y]
    return {
        "layers": layers,
        "epochs": epochs,
        "seed": seed,
        "train_pairs": len(train),
        "held_out_pairs": len(test),
        "train_seconds": round(trained, 1),
        "held_out_auc": round(_auc(test_scores, labels), 4),
        "paraphrases_found_at_train_threshold": round(share("paraphrase"), 4),
        "different_merged_at_train_threshold": round(share("different"), 4),
        "hard_negatives_merged_at_train_threshold": round(share("hard_negative"), 4),
        "paraphrase_recall_at_2pct_fpr_oracle": round(sum(s >= at_two for s in pos) / len(pos), 4),
        "ms_per_pair_p50_torch": round(1000 * pair_seconds[len(pair_seconds) // 2], 2),
        "ms_per_pair_p99_torch": round(1000 * pair_seconds[int(0.99 * len(pair_seconds))], 2),
        **_as_verifier(test, test_scores),
    }


def _as_verifier(test: list[Pair], scores: list[float]) -> dict[str, float]:
    """The held-out text pairs through the funnel with its defaults, then the cross-encoder
    overturning every match but an exact one whose logit is under each of ``VETO_LOGITS``."""
    import tempfile

    from tooldedup.calibration.samples import load_pairs
    from tooldedup.calibration.scoring import score_pairs
    from tooldedup.dedup.policy import PolicySet, ToolPolicy
    from tooldedup.index.settings import ServiceSettings
    from tooldedup.index.wiring import build_embedder

    by_id = {p[4]: (p[3], s) for p, s in zip(test, scores, strict=True)}
    pairs = [p for p in load_pairs(PAIRS) if p.ref in by_id]
    with tempfile.TemporaryDirectory() as work:
        samples, _ = score_pairs(
            pairs, PolicySet.build(ToolPolicy(), {}), build_embedder(ServiceSettings()), Path(work)
        )
    out: dict[str, float] = {}
    for veto in (None, *VETO_LOGITS):
        merged: dict[str, list[bool]] = {kind: [] for kind in KINDS}
        for sample in samples:
            kind, logit = by_id[sample.ref]
            match = sample.predicted(0.85)
            if match and sample.fixed != "exact" and veto is not None and logit < veto:
                match = False
            merged[kind].append(match)
        name = "funnel" if veto is None else f"funnel_veto_below_{veto:g}"
        for kind, found in merged.items():
            out[f"{name}_{kind}_merged"] = round(sum(found) / len(found), 4)
    return out


def main() -> None:
    """Train and measure; write ``results/cross-encoder.{json,md}``."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--layers", type=int, default=6)
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--seeds", type=int, default=1)
    args = parser.parse_args()
    runs = [run(args.layers, args.epochs, seed) for seed in range(args.seeds)]
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "cross-encoder.json").write_text(json.dumps(runs, indent=2) + "\n")
    keys = [k for k in runs[0] if k not in ("layers", "epochs", "seed")]
    lines = [
        "# A MiniLM cross-encoder as the verifier (issue 9 candidate)",
        "",
        "`python -m benchmarks.cross_encoder`: fine-tuned on the calibration half's free-text"
        f" pairs (no text shared with the held-out half; {args.layers} layers, {args.epochs}"
        " epochs), scored on the held-out half. One column per seed. The threshold is the one"
        " at 2 % false positives on the training pairs.",
        "",
        "| measure | " + " | ".join(f"seed {r['seed']}" for r in runs) + " |",
        "| --- | " + " | ".join("---:" for _ in runs) + " |",
        *(f"| {k} | " + " | ".join(str(r[k]) for r in runs) + " |" for k in keys),
        "",
    ]
    (RESULTS / "cross-encoder.md").write_text("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
