"""One-sided confidence bounds on a binomial proportion (here: precision)."""

from __future__ import annotations

import math

__all__ = ["clopper_pearson_lower", "labels_needed", "wilson_lower"]


def _check(successes: int, trials: int, confidence: float) -> None:
    if trials < 0 or not 0 <= successes <= trials:
        raise ValueError("need 0 <= successes <= trials")
    if not 0.0 < confidence < 1.0:
        raise ValueError("confidence must be in (0, 1)")


def clopper_pearson_lower(successes: int, trials: int, confidence: float = 0.95) -> float:
    """Exact one-sided lower bound: P(true rate >= bound) >= confidence."""
    _check(successes, trials, confidence)
    if successes == 0:
        return 0.0
    # Imported here: scipy comes with the calibrate extra, and the server never needs it.
    from scipy.stats import beta

    return float(beta.ppf(1.0 - confidence, successes, trials - successes + 1))


def wilson_lower(successes: int, trials: int, confidence: float = 0.95) -> float:
    """Wilson score one-sided lower bound."""
    _check(successes, trials, confidence)
    if trials == 0:
        return 0.0
    from scipy.stats import norm

    z = float(norm.ppf(confidence))
    p = successes / trials
    centre = p + z * z / (2 * trials)
    spread = z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials))
    return max(0.0, (centre - spread) / (1 + z * z / trials))


def labels_needed(target: float, confidence: float = 0.95) -> int:
    """The fewest all-correct predicted duplicates whose exact bound meets ``target``."""
    if not 0.0 < target < 1.0:
        raise ValueError("target must be in (0, 1)")
    # With n successes out of n the exact bound is (1 - confidence) ** (1 / n).
    return math.ceil(math.log(1.0 - confidence) / math.log(target))
