"""Interval maths on known binomial cases."""

from __future__ import annotations

import math

import pytest
from scipy.stats import binom, norm

from tooldedup.calibration.intervals import clopper_pearson_lower, labels_needed, wilson_lower


@pytest.mark.parametrize(
    ("successes", "trials", "expected"),
    [
        (299, 299, 0.05 ** (1 / 299)),  # all correct: the bound is alpha ** (1/n)
        (10, 10, 0.05 ** (1 / 10)),
        (0, 10, 0.0),
        (50, 100, 0.4136217),
        (95, 100, 0.8977466),
    ],
)
def test_clopper_pearson_known_cases(successes: int, trials: int, expected: float) -> None:
    assert clopper_pearson_lower(successes, trials) == pytest.approx(expected, abs=1e-4)


@pytest.mark.parametrize(("successes", "trials"), [(1, 1), (7, 20), (95, 100), (990, 1000)])
def test_clopper_pearson_is_exact(successes: int, trials: int) -> None:
    # At the bound, seeing this many successes or more has probability exactly alpha.
    bound = clopper_pearson_lower(successes, trials, 0.95)
    assert binom.sf(successes - 1, trials, bound) == pytest.approx(0.05, rel=1e-6)


@pytest.mark.parametrize(("successes", "trials"), [(50, 100), (9, 10), (990, 1000)])
def test_wilson_solves_the_score_equation(successes: int, trials: int) -> None:
    bound = wilson_lower(successes, trials, 0.95)
    p = successes / trials
    z = (p - bound) / math.sqrt(bound * (1 - bound) / trials)
    assert z == pytest.approx(norm.ppf(0.95), rel=1e-6)


def test_wilson_edges() -> None:
    assert wilson_lower(0, 0) == 0.0
    assert wilson_lower(0, 10) == 0.0
    assert 0.0 < wilson_lower(10, 10) < 1.0


def test_bounds_shrink_with_more_evidence() -> None:
    assert clopper_pearson_lower(99, 100) < clopper_pearson_lower(990, 1000)
    assert wilson_lower(99, 100) < wilson_lower(990, 1000)


@pytest.mark.parametrize(("target", "needed"), [(0.99, 299), (0.95, 59), (0.9, 29), (0.8, 14)])
def test_labels_needed(target: float, needed: int) -> None:
    assert labels_needed(target) == needed
    assert clopper_pearson_lower(needed, needed) >= target
    assert clopper_pearson_lower(needed - 1, needed - 1) < target


@pytest.mark.parametrize(("successes", "trials"), [(-1, 5), (6, 5)])
def test_invalid_counts(successes: int, trials: int) -> None:
    with pytest.raises(ValueError, match="successes"):
        clopper_pearson_lower(successes, trials)
