"""The pair model measured on the held-out half: ranking, its bars through the funnel, its cost.

    python -m benchmarks.pair_model [--model DIR --name NAME] [--runs 3]

The pairs are the held-out half's free-text pairs (``paraphrase`` against ``different`` and
``hard_negative``, each reduced to the field that differs), the ones the model never saw. Each
goes through the service with the rules alone (``calibration.scoring``): its stage, cosine and
the rules' verdict. The table then applies ``ModelVerifier``'s logic for each setting of its
bars (``min_logit_same``, ``min_logit_confirm``) and of the policy's ``min_cosine_confirmed``,
under which a match is no duplicate and down to which only a confirmed one is (and one whose
negations changed never is). A last section sweeps a finer grid (``benchmarks.frontier``, checked
against the table first) for the best any bars could do. The service's own run of the chosen
defaults is ``tooldedup calibrate --compare-modes``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from benchmarks.frontier import BORDERLINE, KINDS, columns, frontier, merged, sweep
from tooldedup.calibration.samples import LabelledPair, Sample, load_pairs
from tooldedup.calibration.scoring import score_pairs
from tooldedup.calibration.train_pair_model import PAIRS, TextPair, text_pairs
from tooldedup.dedup.english import RuleVerifier
from tooldedup.dedup.english.negations import negation_changed
from tooldedup.dedup.model_verifier import ModelVerifier
from tooldedup.dedup.policy import PolicySet, ToolPolicy
from tooldedup.dedup.verifier import Verdict, VerdictKind
from tooldedup.index.pair_model import OnnxPairScorer, load_pair_model
from tooldedup.index.settings import ServiceSettings
from tooldedup.index.wiring import build_embedder, word_cosine

RESULTS = Path(__file__).parent / "results"
NEVER = None
# (min_logit_same, min_logit_confirm, min_cosine_confirmed)
SETTINGS: list[tuple[float, float | None, float]] = [
    (same, confirm, low)
    for same in (-3.0, -2.5, -2.0, -1.0, 0.0)
    for confirm, low in ((NEVER, 0.85), (3.0, 0.80), (3.0, 0.75), (4.0, 0.75), (4.0, 0.70))
]
DEFAULTS = (-2.5, NEVER, 0.85)


@dataclass(frozen=True, slots=True)
class Seen:
    """One held-out pair as the service saw it with the rules alone, and the model's logit."""

    kind: str
    sample: Sample
    rules: Verdict
    logit: float | None
    negation_changed: bool


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


def _merged(seen: Seen, same: float, confirm: float | None, low: float) -> bool:
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
    if sample.cosine >= BORDERLINE:
        # At or above the borderline band's floor, the default action (duplicate) stands.
        return passes
    confirmed = verdict is VerdictKind.CONFIRMED and not seen.negation_changed
    return sample.cosine >= low and confirmed


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
        logit = scorer.score(pair.first, pair.second)
        moved = negation_changed(pair.first, pair.second)
        seen.append(Seen(pair.kind, sample, verdict, logit, moved))
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
    # Rules alone first: bars no logit reaches.
    for same, confirm, low in [(-1e9, NEVER, 0.85), *SETTINGS]:
        row: dict[str, object] = {
            "min_logit_same": same,
            "min_logit_confirm": confirm,
            "min_cosine_confirmed": low,
            "default": (same, confirm, low) == DEFAULTS,
        }
        for kind in KINDS:
            group = [s for s in seen if s.kind == kind]
            merged = sum(_merged(s, same, confirm, low) for s in group)
            row[f"{kind}_merged"] = round(merged / len(group), 4)
        rows.append(row)
    report["settings"] = rows
    report["frontier"] = _frontier(seen, rows)
    return report


def _frontier(seen: list[Seen], rows: list[dict[str, object]]) -> list[dict[str, object]]:
    """The sweep of ``benchmarks.frontier``, once it agrees with ``_merged`` on the grid above."""
    table = columns(
        [s.kind for s in seen],
        [s.sample.fixed for s in seen],
        [s.sample.cosine for s in seen],
        [s.logit for s in seen],
        [s.rules.kind for s in seen],
        [s.rules.final for s in seen],
        [s.negation_changed for s in seen],
    )
    for row in rows:
        same, confirm, low = (
            row["min_logit_same"],
            row["min_logit_confirm"],
            row["min_cosine_confirmed"],
        )
        assert isinstance(same, float)
        assert isinstance(low, float)
        assert confirm is None or isinstance(confirm, float)
        fast = merged(table, same, confirm, low)
        for kind in KINDS:
            share = round(float(fast[table.kind == kind].mean()), 4)
            if share != row[f"{kind}_merged"]:
                raise AssertionError(f"the sweep disagrees with _merged at {row}: {kind} {share}")
    return frontier(list(sweep(table)))


def _markdown(report: dict[str, object], runs: int) -> str:
    rows = report["settings"]
    assert isinstance(rows, list)
    head = (
        "| same < | confirm ≥ | confirmed from | paraphrases found"
        " | different merged | hard negatives merged |"
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
        "Rules alone first; then each setting, the defaults in bold. Bars are pair-model"
        " logits (`min_logit_same`, `min_logit_confirm`; — is never);"
        ' "confirmed from" is the policy\'s `min_cosine_confirmed`: under the borderline band'
        " (0.85) and down to it, only a confirmed match is a duplicate.",
        "",
        head,
        "|---:|---:|---:|---:|---:|---:|",
    ]

    def bar(value: object) -> str:
        return "—" if value is None or value == -1e9 else f"{value:g}"

    for row in rows:
        cells = [
            bar(row["min_logit_same"]),
            bar(row["min_logit_confirm"]),
            f"{row['min_cosine_confirmed']:.2f}",
            f"{100 * row['paraphrase_merged']:.1f}%",
            f"{100 * row['different_merged']:.1f}%",
            f"{100 * row['hard_negative_merged']:.1f}%",
        ]
        if row["default"]:
            cells = [f"**{cell}**" for cell in cells]
        lines.append("| " + " | ".join(cells) + " |")
    lines += _frontier_markdown(report, bar)
    return "\n".join(lines) + "\n"


def _frontier_markdown(report: dict[str, object], bar: Callable[[object], str]) -> list[str]:
    found = report["frontier"]
    assert isinstance(found, list)
    lines = [
        "",
        "## The frontier: the best any bars could do",
        "",
        "Each bound's best setting, chosen on these very pairs (`benchmarks/frontier.py`), so"
        " every figure is optimistic: what the shipped defaults cannot beat. `funnel` is the"
        " rules and pair model as served; `doubt lifted` also lets the model lift a rule's"
        " `unsure`; `model alone` has no rules, merges no pair too long for the model, and its"
        ' "confirmed from" is its one cosine floor. — in the bound\'s columns: no setting'
        " reaches it. Distinct pairs are different content and hard negatives together.",
        "",
        "| family | bound | same < | confirm ≥ | confirmed from | doubt lifted ≥"
        " | paraphrases found | different merged | hard negatives merged | distinct pairs merged |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for row in found:
        if "paraphrase_merged" not in row:
            lines.append(f"| {row['family']} | {row['bound']} |" + " — |" * 8)
            continue
        shares = [f"{100 * float(row[f'{kind}_merged']):.1f}%" for kind in KINDS]
        lines.append(
            f"| {row['family']} | {row['bound']} | {bar(row['min_logit_same'])}"
            f" | {bar(row['min_logit_confirm'])} | {float(row['min_cosine_confirmed']):.2f}"
            f" | {bar(row['lift_doubt_at'])} | "
            + " | ".join(shares)
            + f" | {row['distinct_merged']} |"
        )
    return lines


def main() -> None:
    """Measure; write ``results/<name>.{json,md}``."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--model", type=Path, default=None, help="pair-model folder")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument(
        "--name",
        default="pair-model",
        help="results file name, for a model other than the shipped one",
    )
    args = parser.parse_args()
    if not args.name or not all(c.isalnum() or c in "-_." for c in args.name):
        parser.error("--name takes letters, digits, '-', '_' and '.'")
    report = measure(args.model, args.runs)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / f"{args.name}.json").write_text(json.dumps(report, indent=2) + "\n")
    text = _markdown(report, args.runs)
    (RESULTS / f"{args.name}.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
