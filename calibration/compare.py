"""Compare matching modes on labelled pairs: exact-only, whole-call embedding, the funnel."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from tooldedup.calibration.samples import Sample

__all__ = ["DISTINCT_KINDS", "DUPLICATE_KINDS", "ModeResult", "compare_modes", "markdown_table"]

DUPLICATE_KINDS = ("reissue", "equivalent", "paraphrase")
DISTINCT_KINDS = ("natural", "critical", "different", "hard_negative")
Predict = Callable[[Sample], bool]


@dataclass(frozen=True, slots=True)
class ModeResult:
    """Precision, recall and false-positive rate of one mode, overall and per kind of case."""

    mode: str
    precision: float
    recall: float
    false_positive_rate: float
    by_kind: dict[str, float]

    @property
    def f1(self) -> float:
        """Harmonic mean of precision and recall."""
        total = self.precision + self.recall
        return 2 * self.precision * self.recall / total if total else 0.0


def _rate(hits: int, total: int) -> float:
    return hits / total if total else float("nan")


def _score(mode: str, samples: Sequence[Sample], predict: Predict) -> ModeResult:
    tp = sum(1 for s in samples if s.duplicate and predict(s))
    fp = sum(1 for s in samples if not s.duplicate and predict(s))
    positives = sum(1 for s in samples if s.duplicate)
    negatives = len(samples) - positives
    by_kind = {}
    for kind in (*DUPLICATE_KINDS, *DISTINCT_KINDS):
        group = [s for s in samples if s.kind == kind]
        by_kind[kind] = _rate(sum(1 for s in group if predict(s)), len(group))
    return ModeResult(mode, _rate(tp, tp + fp), _rate(tp, positives), _rate(fp, negatives), by_kind)


def compare_modes(
    fields: Sequence[Sample],
    whole: Sequence[Sample],
    calibrated: float | None,
    default_borderline: float = 0.85,
    pair_model: Sequence[Sample] = (),
) -> list[ModeResult]:
    """Score each mode on the same pairs (pass only held-out pairs for a fair comparison).

    ``pair_model``: the same pairs scored with the pair model (policy ``pair_model = true``).
    """
    results = [
        _score("exact-only (canonical hash)", fields, lambda s: s.fixed == "exact"),
        _score("whole-call embedding, cosine >= 0.85", whole, lambda s: s.predicted(0.85)),
        _score("whole-call embedding, cosine >= 0.90", whole, lambda s: s.predicted(0.90)),
        _score(
            "field-aware funnel, defaults (rules; 0.90, borderline 0.85)",
            fields,
            lambda s: s.predicted(default_borderline),
        ),
    ]
    if pair_model:
        results.append(
            _score(
                "field-aware funnel, with the pair model (pair_model = true)",
                pair_model,
                lambda s: s.predicted(default_borderline),
            ),
        )
    if calibrated is not None:
        results.append(
            _score(
                f"field-aware funnel, calibrated ({calibrated:.4f})",
                fields,
                lambda s: s.predicted(calibrated),
            )
        )
    return results


def _pct(value: float) -> str:
    return "n/a" if value != value else f"{value * 100:.1f}%"


def markdown_table(results: Sequence[ModeResult]) -> str:
    """The comparison as a markdown table: recall per duplicate kind, FPR per distinct kind."""
    head = ["mode", "precision", "recall", "F1", "FPR"]
    head += [f"{k} (recall)" for k in DUPLICATE_KINDS] + [f"{k} (FPR)" for k in DISTINCT_KINDS]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in results:
        cells = [r.mode, _pct(r.precision), _pct(r.recall), f"{r.f1:.3f}"]
        cells.append(_pct(r.false_positive_rate))
        cells += [_pct(r.by_kind[k]) for k in (*DUPLICATE_KINDS, *DISTINCT_KINDS)]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)
