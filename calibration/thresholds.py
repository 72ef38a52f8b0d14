"""Threshold sweeps and selection under a precision guarantee."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from tooldedup.calibration.intervals import clopper_pearson_lower, labels_needed
from tooldedup.calibration.samples import Sample

__all__ = [
    "Calibration",
    "OperatingPoint",
    "choose_thresholds",
    "evaluate",
    "labels_to_go",
    "matched_duplicates",
    "sweep",
]

# Above every cosine: the semantic stage never decides, only exact and fuzzy do.
SEMANTIC_OFF = 1.000001
Bound = Callable[[int, int, float], float]


@dataclass(frozen=True, slots=True)
class OperatingPoint:
    """Confusion counts and rates at one duplicate threshold."""

    min_cosine: float
    tp: int
    fp: int
    fn: int
    tn: int
    precision: float
    precision_lower: float
    recall: float

    @property
    def false_positive_rate(self) -> float:
        """Share of distinct pairs called duplicates."""
        negatives = self.fp + self.tn
        return self.fp / negatives if negatives else 0.0


@dataclass(frozen=True, slots=True)
class Calibration:
    """Chosen thresholds for one tool (or globally), or why there are none."""

    scope: str
    labels: int
    duplicates: int
    enough: bool
    point: OperatingPoint | None
    min_cosine_duplicate: float | None
    min_cosine_borderline: float | None
    message: str
    # More labelled duplicates needed before a threshold can be shown (0: labels are not
    # what is missing).
    labels_short: int = 0


def matched_duplicates(samples: Sequence[Sample]) -> int:
    """Labelled duplicates some stage scored: the evidence a precision bound rests on."""
    return sum(s.duplicate and (s.fixed is not None or s.cosine is not None) for s in samples)


def labels_to_go(samples: Sequence[Sample], target: float, confidence: float = 0.95) -> int:
    """How many more labelled duplicates a tool needs before its precision can be shown:
    the "label ~N more" that ``tooldedup calibrate`` prints (0: enough). Counting only, no
    interval maths, so the server shows it too."""
    return max(labels_needed(target, confidence) - matched_duplicates(samples), 0)


def evaluate(
    samples: Sequence[Sample],
    min_cosine: float,
    confidence: float = 0.95,
    bound: Bound = clopper_pearson_lower,
) -> OperatingPoint:
    """Counts and rates when every pair at or above ``min_cosine`` is called a duplicate."""
    tp = fp = fn = tn = 0
    for sample in samples:
        predicted = sample.predicted(min_cosine)
        if predicted and sample.duplicate:
            tp += 1
        elif predicted:
            fp += 1
        elif sample.duplicate:
            fn += 1
        else:
            tn += 1
    called = tp + fp
    return OperatingPoint(
        min_cosine=min_cosine,
        tp=tp,
        fp=fp,
        fn=fn,
        tn=tn,
        precision=tp / called if called else 1.0,
        precision_lower=bound(tp, called, confidence) if called else 0.0,
        recall=tp / (tp + fn) if tp + fn else 0.0,
    )


def sweep(
    samples: Sequence[Sample], confidence: float = 0.95, bound: Bound = clopper_pearson_lower
) -> list[OperatingPoint]:
    """One operating point per distinct cosine, highest threshold first."""
    off = evaluate(samples, SEMANTIC_OFF, confidence, bound)
    scored = sorted(
        (s for s in samples if s.fixed is None and s.cosine is not None and not s.vetoed),
        key=lambda s: -(s.cosine or 0.0),
    )
    points = [off]
    tp, fp = off.tp, off.fp
    positives = off.tp + off.fn
    negatives = off.fp + off.tn
    for i, sample in enumerate(scored):
        tp += sample.duplicate
        fp += not sample.duplicate
        last_of_tie = i + 1 == len(scored) or scored[i + 1].cosine != sample.cosine
        if not last_of_tie:
            continue
        called = tp + fp
        points.append(
            OperatingPoint(
                min_cosine=sample.cosine or 0.0,
                tp=tp,
                fp=fp,
                fn=positives - tp,
                tn=negatives - fp,
                precision=tp / called,
                precision_lower=bound(tp, called, confidence),
                recall=tp / positives if positives else 0.0,
            )
        )
    return points


def _band_floor(samples: Sequence[Sample], top: float, window: int = 20) -> float:
    """How far below ``top`` pairs stay mostly duplicates, judged over a sliding window.

    Walking down from the duplicate threshold, the band ends where fewer than half of the
    last ``window`` scored pairs are duplicates: below that a judge would mostly say no.
    """
    band = sorted(
        (
            s
            for s in samples
            if s.fixed is None and s.cosine is not None and not s.vetoed and s.cosine < top
        ),
        key=lambda s: -(s.cosine or 0.0),
    )
    floor = top
    for i, sample in enumerate(band):
        recent = band[max(0, i - window + 1) : i + 1]
        if sum(s.duplicate for s in recent) * 2 < len(recent):
            break
        floor = sample.cosine or top
    return floor


def _between(samples: Sequence[Sample], score: float) -> float:
    """A threshold halfway between ``score`` and the next lower recorded score.

    Logged scores are rounded, and the service compares raw cosines with ``>=``: a
    threshold exactly at a recorded score would let rounding decide a pair's fate.
    """
    lower = [s.cosine for s in samples if s.cosine is not None and s.cosine < score]
    below = max(lower) if lower else score - 1e-4
    return max(-1.0, (score + below) / 2)


def choose_thresholds(
    samples: Sequence[Sample],
    target: float,
    scope: str,
    confidence: float = 0.95,
    bound: Bound = clopper_pearson_lower,
) -> Calibration:
    """Maximise recall subject to the precision lower bound meeting ``target``.

    The borderline band below the duplicate threshold reaches down as far as its pairs are
    still mostly duplicates; it is for a judge, and otherwise proceeds, so the guarantee holds.
    """
    duplicates = sum(s.duplicate for s in samples)
    # Fixed-sequence testing: walk down from the strictest threshold and stop at the first
    # that fails. Picking the best of every passing threshold would spend the confidence
    # level many times over.
    # Thresholds that call too few duplicates to ever show the target are no test at all:
    # the walk starts where there is enough evidence.
    enough_calls = labels_needed(target, confidence)
    passing: list[OperatingPoint] = []
    for point in sweep(samples, confidence, bound):
        if point.tp + point.fp < enough_calls:
            continue
        if point.precision_lower < target:
            break
        passing.append(point)
    semantic = [p for p in passing if p.min_cosine <= 1.0]
    if not semantic:
        base = evaluate(samples, SEMANTIC_OFF, confidence, bound)
        needed = labels_needed(target, confidence)
        more = 0
        if base.fp:
            why = f"exact and fuzzy matches alone already include {base.fp} false duplicates"
        else:
            has = matched_duplicates(samples)
            more = max(needed - has, 1)
            why = (
                f"too few labels: precision >= {target} at {confidence:.0%} confidence needs "
                f">= {needed} matched duplicates; has {has}, label ~{more} more"
            )
        return Calibration(scope, len(samples), duplicates, False, None, None, None, why, more)
    best = semantic[-1]
    top = _between(samples, best.min_cosine)
    floor = min(top, _between(samples, _band_floor(samples, best.min_cosine)))
    message = (
        f"precision {best.precision:.4f} (lower bound {best.precision_lower:.4f}), "
        f"recall {best.recall:.4f}"
    )
    return Calibration(scope, len(samples), duplicates, True, best, top, floor, message)
