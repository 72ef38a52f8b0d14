"""Threshold selection on synthetic score sets."""

from __future__ import annotations

import random

import pytest

from tooldedup.calibration.command import would_match
from tooldedup.calibration.intervals import clopper_pearson_lower, wilson_lower
from tooldedup.calibration.samples import Sample
from tooldedup.calibration.thresholds import SEMANTIC_OFF, choose_thresholds, evaluate, sweep
from tooldedup.dedup.policy import ToolPolicy


def _samples(dups: list[float], distinct: list[float]) -> list[Sample]:
    return [Sample(f"d{i}", "t", True, None, c) for i, c in enumerate(dups)] + [
        Sample(f"n{i}", "t", False, None, c) for i, c in enumerate(distinct)
    ]


def test_separated_scores_give_full_recall() -> None:
    rng = random.Random(1)
    samples = _samples(
        [0.9 + rng.random() / 10 for _ in range(400)], [0.5 + rng.random() / 4 for _ in range(400)]
    )
    chosen = choose_thresholds(samples, 0.99, "t")
    assert chosen.enough
    assert chosen.point is not None
    assert chosen.point.recall == 1.0
    lowest_duplicate = min(s.cosine or 0 for s in samples if s.duplicate)
    highest_distinct = max(s.cosine or 0 for s in samples if not s.duplicate)
    # Written halfway between the two recorded scores, so rounding cannot decide.
    assert chosen.min_cosine_duplicate == pytest.approx((lowest_duplicate + highest_distinct) / 2)
    assert chosen.point.precision_lower >= 0.99


def test_overlap_trades_recall_for_the_guarantee() -> None:
    rng = random.Random(2)
    samples = _samples(
        [0.8 + rng.random() / 5 for _ in range(1000)], [0.6 + rng.random() / 4 for _ in range(300)]
    )
    chosen = choose_thresholds(samples, 0.99, "t")
    assert chosen.enough
    assert chosen.point is not None
    assert chosen.point.precision_lower >= 0.99
    assert 0.8 < (chosen.min_cosine_duplicate or 0) < 0.86  # inside the overlap
    assert chosen.point.recall < 1.0
    # Walking down, the next threshold is the first to break the guarantee.
    lower = [p for p in sweep(samples) if p.min_cosine < chosen.point.min_cosine]
    assert lower[0].precision_lower < 0.99
    assert chosen.min_cosine_duplicate is not None
    assert lower[0].min_cosine < chosen.min_cosine_duplicate <= chosen.point.min_cosine
    # The borderline band sits below the duplicate threshold and is mostly duplicates.
    assert chosen.min_cosine_borderline is not None
    assert chosen.min_cosine_borderline <= chosen.point.min_cosine


def test_too_few_labels_says_how_many_more() -> None:
    samples = _samples([0.95] * 40, [0.2] * 40)
    chosen = choose_thresholds(samples, 0.99, "t")
    assert not chosen.enough
    assert chosen.min_cosine_duplicate is None
    assert "needs >= 299" in chosen.message
    assert "label ~259 more" in chosen.message


def test_errors_in_exact_matches_are_reported() -> None:
    samples = [Sample("x", "t", False, "exact", None), *_samples([0.99] * 400, [])]
    chosen = choose_thresholds(samples, 0.999, "t")
    assert not chosen.enough
    assert "false duplicates" in chosen.message


@pytest.mark.parametrize("bound", [clopper_pearson_lower, wilson_lower])
def test_sweep_matches_direct_evaluation(bound: object) -> None:
    rng = random.Random(3)
    samples = _samples(
        [round(rng.random(), 2) for _ in range(200)], [round(rng.random(), 2) for _ in range(200)]
    )
    samples.append(Sample("e", "t", True, "exact", None))
    samples.append(Sample("none", "t", True, None, None))
    points = sweep(samples, 0.95, bound)  # type: ignore[arg-type]
    assert points[0].min_cosine == SEMANTIC_OFF
    for point in points:
        direct = evaluate(samples, point.min_cosine, 0.95, bound)  # type: ignore[arg-type]
        assert (point.tp, point.fp, point.fn, point.tn) == (
            direct.tp,
            direct.fp,
            direct.fn,
            direct.tn,
        )
        assert point.precision_lower == pytest.approx(direct.precision_lower)


@pytest.mark.parametrize(
    ("cosine", "threshold", "predicted"),
    [
        (0.9, 0.9, True),
        (0.8999999, 0.9, False),
        (-1.0, -1.0, True),
        (1.0, 1.0, True),
        (None, -1.0, False),
    ],
)
def test_prediction_boundaries(cosine: float | None, threshold: float, predicted: bool) -> None:
    assert Sample("s", "t", True, None, cosine).predicted(threshold) is predicted


@pytest.mark.parametrize(
    ("cosine", "confirmed", "floor", "predicted"),
    [
        (0.80, True, 0.75, True),
        (0.80, False, 0.75, False),
        (0.74, True, 0.75, False),
        # No band: a confirmation under the threshold changes nothing.
        (0.80, True, None, False),
        (0.91, False, 0.75, True),
    ],
)
def test_a_confirmed_match_under_the_threshold(
    cosine: float, confirmed: bool, floor: float | None, predicted: bool
) -> None:
    sample = Sample("s", "t", True, None, cosine, confirmed=confirmed)
    assert sample.predicted(0.9, floor) is predicted
    policy = ToolPolicy(
        min_cosine_duplicate=0.9, min_cosine_borderline=0.9, min_cosine_confirmed=floor or 1.0
    )
    assert would_match(sample, policy) is predicted


def test_written_threshold_predicts_what_was_evaluated() -> None:
    rng = random.Random(4)
    samples = _samples(
        [round(0.8 + rng.random() / 5, 6) for _ in range(1000)],
        [round(0.6 + rng.random() / 4, 6) for _ in range(300)],
    )
    chosen = choose_thresholds(samples, 0.99, "t")
    assert chosen.point is not None
    assert chosen.min_cosine_duplicate is not None
    written = evaluate(samples, chosen.min_cosine_duplicate)
    assert (written.tp, written.fp) == (chosen.point.tp, chosen.point.fp)
