"""The pair model measured on the held-out half: ranking, its bars through the funnel, its cost.

    python -m benchmarks.pair_model [--model DIR] [--runs 3]

The pairs are the held-out half's free-text pairs (``paraphrase`` against ``different`` and
``hard_negative``, each reduced to the field that differs), the ones the model never saw. Each
goes through the service with the rules alone (``calibration.scoring``): its stage, cosine and
the rules' verdict. The table then applies ``ModelVerifier``'s logic for each pair of bars, and
for a borderline band widened below 0.85 in which only a confirmed match is a duplicate
(policy ``min_cosine_borderline`` lowered, ``borderline_action = "proceed"``). The service's
own run of the chosen defaults is ``tooldedup calibrate --compare-modes``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from tooldedup.calibration.samples import LabelledPair, Sample, load_pairs
from tooldedup.calibration.scoring import score_pairs
from tooldedup.calibration.train_pair_model import PAIRS, TextPair, text_pairs
from tooldedup.dedup.model_verifier import ModelVerifier
from tooldedup.dedup.policy import PolicySet, ToolPolicy
from tooldedup.dedup.verifier import RuleVerifier, Verdict, VerdictKind
from tooldedup.index.pair_model import OnnxPairScorer, load_pair_model
from tooldedup.index.settings import ServiceSettings
from tooldedup.index.wiring import build_embedder, word_cosine

RESULTS = Path(__file__).parent / "results"
KINDS = ("paraphrase", "different", "hard_negative")
# (min_logit_same, min_logit_confirm, lowest cosine read, borderline action is duplicate)
SETTINGS = [
    (same, confirm, low, low == 0.85)
    for same in (-3.0, -2.0, -1.0, 0.0, 1.0)
    for confirm in (1.0, 2.0, 3.0)
    for low in (0.85, 0.80, 0.75)
]


@dataclass(frozen=True, slots=True)
class Seen:
    """One held-out pair as the service saw it with the rules alone, and the model's logit."""

    kind: str
    sample: Sample
    rules: Verdict
    logit: float | None


@dataclass(frozen=True, slots=True)
class _Known:
    """The rules' verdict and the model's logit of one pair, read back without recomputing."""

    verdict: Verdict
    logit: float | None
    model_id: str = "known"

    def compare(self, stored: str, proposed: str) -> Verdict:
        return self.verdict

    def score(self, first: str, second: str) -> float | None:
        return self.logit


def _merged(seen: Seen, same: float, confirm: float, low: float, borderline_dup: bool) -> bool:
    """What the funnel answers with ``ModelVerifier`` at these bars (see ``dedup.semantic``)."""
    sample = seen.sample
    if sample.fixed == "exact":
        return True
    known = _Known(seen.rules, seen.logit)
    verifier = ModelVerifier(known, known, min_logit_same=same, min_logit_confirm=confirm)
    verdict = verifier.compare("", "").kind
    passes = verdict in (VerdictKind.CONFIRMED, VerdictKind.NO_OBJECTION)
    if sample.fixed == "fuzzy" and passes:
        return True
    if sample.cosine is None:
        return False
    if sample.cosine >= 0.90:
        return passes
    if sample.cosine >= low:
        return verdict is VerdictKind.CONFIRMED or (
            verdict is VerdictKind.NO_OBJECTION and borderline_dup
        )
    return False


def _auc(positives: list[float], negatives: list[float]) -> float:
    wins = sum((p > n) + 0.5 * (p == n) for p in positives for n in negatives)
    return wins / (len(positives) * len(negatives))


def _cost(scorer: OnnxPairScorer, pairs: list[TextPair], runs: int) -> dict[str, float]:
    """Medians over ``runs`` of the p50 and p99 milliseconds per scored pair."""
    p50s, p99s = [], []
    for _ in range(runs):
        times = []
        for pair in pairs:
            started = time.perf_counter()
            scorer.score(pair.first, pair.second)
            times.append(1000 * (time.perf_counter() - started))
        times.sort()
        p50s.append(times[len(times) // 2])
        p99s.append(times[int(0.99 * len(times))])
    return {"ms_p50": statistics.median(p50s), "ms_p99": statistics.median(p99s)}


def measure(model: Path | None, runs: int) -> dict[str, object]:
    """Every figure of the report."""
    scorer = OnnxPairScorer(load_pair_model(model))
    _, held = text_pairs()
    by_ref = {pair.ref: pair for pair in held}
    labelled: list[LabelledPair] = [p for p in load_pairs(PAIRS) if p.ref in by_ref]
    embedder = build_embedder(ServiceSettings())
    rules = RuleVerifier(word_cosine=word_cosine(embedder))
    with tempfile.TemporaryDirectory() as work:
        policies = PolicySet.build(ToolPolicy(), {})
        samples, _ = score_pairs(labelled, policies, embedder, Path(work), pair_model=False)
    seen = []
    for sample in samples:
        pair = by_ref[sample.ref]
        verdict = rules.compare(pair.first, pair.second)
        seen.append(Seen(pair.kind, sample, verdict, scorer.score(pair.first, pair.second)))
    logits = {
        kind: [s.logit for s in seen if s.kind == kind and s.logit is not None] for kind in KINDS
    }
    scored = sum(len(found) for found in logits.values())
    report: dict[str, object] = {
        "model_id": scorer.model_id,
        "held_out_pairs": len(seen),
        "too_long_for_the_model": len(seen) - scored,
        **{
            f"auc_paraphrase_vs_{kind}": round(_auc(logits["paraphrase"], logits[kind]), 4)
            for kind in KINDS[1:]
        },
        **{k: round(v, 2) for k, v in _cost(scorer, held, runs).items()},
    }
    rows = []
    for same, confirm, low, borderline_dup in [(-1e9, 1e9, 0.85, True), *SETTINGS]:
        row: dict[str, object] = {
            "min_logit_same": same,
            "min_logit_confirm": confirm,
            "min_cosine_borderline": low,
            "borderline_action": "duplicate" if borderline_dup else "proceed",
        }
        for kind in KINDS:
            group = [s for s in seen if s.kind == kind]
            merged = sum(_merged(s, same, confirm, low, borderline_dup) for s in group)
            row[f"{kind}_merged"] = round(merged / len(group), 4)
        rows.append(row)
    report["settings"] = rows
    return report


def _markdown(report: dict[str, object], runs: int) -> str:
    rows = report["settings"]
    assert isinstance(rows, list)
    head = (
        "| same < | confirm ≥ | band from | paraphrases found | different merged"
        " | hard negatives merged |"
    )
    lines = [
        "# The pair model on the held-out half",
        "",
        "`python -m benchmarks.pair_model`. Model "
        f"`{report['model_id']}`, {report['held_out_pairs']} held-out text pairs it never saw"
        f" ({report['too_long_for_the_model']} longer than it reads, left to the rules).",
        "",
        f"- AUC, paraphrase against different: {report['auc_paraphrase_vs_different']};"
        f" against hard negatives: {report['auc_paraphrase_vs_hard_negative']}.",
        f"- Cost per scored pair (onnxruntime int8, two threads, as served), medians of {runs}"
        " runs:"
        f" {report['ms_p50']} ms p50, {report['ms_p99']} ms p99.",
        "",
        'Rules alone first; then each setting. "band from" is the lowest cosine read: at 0.85'
        " the default borderline action (duplicate) stands, below it only a match the model"
        " confirms is a duplicate.",
        "",
        head,
        "|---:|---:|---:|---:|---:|---:|",
    ]
    for row in rows:
        same = "—" if row["min_logit_same"] == -1e9 else f"{row['min_logit_same']:g}"
        confirm = "—" if row["min_logit_confirm"] == 1e9 else f"{row['min_logit_confirm']:g}"
        lines.append(
            f"| {same} | {confirm} | {row['min_cosine_borderline']:.2f} |"
            f" {100 * row['paraphrase_merged']:.1f}% | {100 * row['different_merged']:.1f}% |"
            f" {100 * row['hard_negative_merged']:.1f}% |"
        )
    return "\n".join(lines) + "\n"


def main() -> None:
    """Measure; write ``results/pair-model.{json,md}``."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--model", type=Path, default=None, help="pair-model folder")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    report = measure(args.model, args.runs)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "pair-model.json").write_text(json.dumps(report, indent=2) + "\n")
    text = _markdown(report, args.runs)
    (RESULTS / "pair-model.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
