"""The best any setting of the verifier's bars could do on the held-out pairs: its frontier.

Every setting is chosen on the very pairs it is scored on, so each figure is a bound the
shipped defaults cannot beat, not a result they could reach. Three families are swept:

- ``funnel``: rules and pair model as served (``ModelVerifier``), every ``min_logit_same``,
  ``min_logit_confirm`` and ``min_cosine_confirmed`` of a fine grid;
- ``funnel, doubt lifted``: the same, and a rule's doubt (``unsure``) lifted by the model at
  or above a bar, which 0.6 tried and did not ship;
- ``model alone``: no rules at all, a match merged at or above a cosine floor and a logit
  (and a pair too long for the model never).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from tooldedup.dedup.verifier import VerdictKind

__all__ = ["Columns", "Point", "columns", "frontier", "merged", "sweep"]

KINDS = ("paraphrase", "different", "hard_negative")
BORDERLINE = 0.85
FUNNEL, LIFTED, ALONE = "funnel", "funnel, doubt lifted", "model alone"
_SAME = [float(round(x, 2)) for x in np.arange(-6.0, 6.01, 0.5)]
_CONFIRM: list[float | None] = [None, *(float(round(x, 2)) for x in np.arange(-2.0, 6.01, 0.5))]
_LOW = [0.85, 0.80, 0.75, 0.70, 0.65, 0.60, 0.50, 0.0]
_ALONE = [float(round(x, 2)) for x in np.arange(-6.0, 8.01, 0.25)]
_ALONE_LOW = [0.95, 0.90, *_LOW]


@dataclass(frozen=True, slots=True)
class Columns:
    """What the sweep needs of each held-out pair, one array per field."""

    kind: np.ndarray
    exact: np.ndarray
    fuzzy: np.ndarray
    cosine: np.ndarray  # -1 where no semantic candidate was found
    logit: np.ndarray  # NaN where the pair is longer than the model reads
    rules: np.ndarray  # VerdictKind names
    final: np.ndarray
    negation_changed: np.ndarray


@dataclass(frozen=True, slots=True)
class Point:
    """One setting, the share of each kind it merges and how many distinct pairs."""

    family: str
    min_logit_same: float | None
    min_logit_confirm: float | None
    min_cosine_confirmed: float
    lift_doubt_at: float | None
    merged: dict[str, float]
    distinct_merged: int


def columns(
    kinds: Sequence[str],
    fixed: Sequence[str | None],
    cosines: Sequence[float | None],
    logits: Sequence[float | None],
    rules: Sequence[VerdictKind],
    finals: Sequence[bool],
    negations: Sequence[bool],
) -> Columns:
    """The pairs as arrays."""
    return Columns(
        kind=np.array(kinds),
        exact=np.array([f == "exact" for f in fixed]),
        fuzzy=np.array([f == "fuzzy" for f in fixed]),
        cosine=np.array([-1.0 if c is None else c for c in cosines]),
        logit=np.array([np.nan if x is None else x for x in logits]),
        rules=np.array([r.name for r in rules]),
        final=np.array(finals, dtype=bool),
        negation_changed=np.array(negations, dtype=bool),
    )


def merged(
    c: Columns,
    same: float,
    confirm: float | None,
    low: float,
    lift: float | None = None,
) -> np.ndarray:
    """Which pairs the funnel merges at these bars: ``benchmarks.pair_model._merged`` on arrays."""
    readable = ~np.isnan(c.logit)
    logit = np.where(readable, c.logit, 0.0)
    overturnable = (c.rules != VerdictKind.DIFFERENT.name) & ~c.final & readable
    model_different = overturnable & (logit < same)
    model_confirmed = (
        overturnable
        & ~model_different
        & (c.rules == VerdictKind.NO_OBJECTION.name)
        & (confirm is not None)
        & (logit >= (confirm if confirm is not None else np.inf))
    )
    passes = ~model_different & (
        (c.rules == VerdictKind.CONFIRMED.name) | (c.rules == VerdictKind.NO_OBJECTION.name)
    )
    if lift is not None:
        passes |= (
            overturnable & ~model_different & (c.rules == VerdictKind.UNSURE.name) & (logit >= lift)
        )
    confirmed = ~model_different & ((c.rules == VerdictKind.CONFIRMED.name) | model_confirmed)
    semantic = ~c.exact & ~(c.fuzzy & passes) & (c.cosine >= 0)
    merge: np.ndarray = (
        c.exact
        | (c.fuzzy & passes)
        | (semantic & (c.cosine >= BORDERLINE) & passes)
        | (semantic & (c.cosine < BORDERLINE) & (c.cosine >= low) & confirmed & ~c.negation_changed)
    )
    return merge


def _alone(c: Columns, same: float, low: float) -> np.ndarray:
    """No rules: a fuzzy or semantic match merged at or above the logit and the floor, and
    none the model cannot read."""
    reads_same = ~np.isnan(c.logit) & (np.nan_to_num(c.logit) >= same)
    merge: np.ndarray = c.exact | (c.fuzzy & reads_same) | ((c.cosine >= low) & reads_same)
    return merge


def _point(
    c: Columns,
    merge: np.ndarray,
    family: str,
    same: float,
    confirm: float | None,
    low: float,
    lift: float | None,
) -> Point:
    shares = {kind: float(merge[c.kind == kind].mean()) for kind in KINDS}
    distinct = int(merge[c.kind != "paraphrase"].sum())
    return Point(family, same, confirm, low, lift, shares, distinct)


def sweep(c: Columns) -> Iterator[Point]:
    """Every setting of the three families."""
    for same in _SAME:
        for confirm in _CONFIRM:
            if confirm is not None and confirm < same:
                continue
            for low in _LOW:
                merge = merged(c, same, confirm, low)
                yield _point(c, merge, FUNNEL, same, confirm, low, None)
                # A bar under min_logit_same lifts what passes it: the same as lifting there.
                for lift in (x for x in _SAME if x >= same):
                    merge = merged(c, same, confirm, low, lift)
                    yield _point(c, merge, LIFTED, same, confirm, low, lift)
    for same in _ALONE:
        for low in _ALONE_LOW:
            yield _point(c, _alone(c, same, low), ALONE, same, None, low, None)


def frontier(points: Sequence[Point]) -> list[dict[str, object]]:
    """Per family, the fewest hard negatives merged at each share of paraphrases found, and the
    most paraphrases found at each share of hard negatives merged."""
    rows: list[dict[str, object]] = []
    for family in dict.fromkeys(p.family for p in points):
        # Lifting no doubt is one setting of the lifted family.
        own = [p for p in points if p.family == family or (family, p.family) == (LIFTED, FUNNEL)]
        for found in (0.80, 0.85, 0.90):
            bound = f"paraphrases found ≥ {found:.0%}"
            ok = [p for p in own if p.merged["paraphrase"] >= found]
            best = min(
                ok, key=lambda p: (p.merged["hard_negative"], p.merged["different"]), default=None
            )
            rows.append(_row(family, bound, best))
        for allowed in (0.01, 0.02):
            bound = f"hard negatives merged ≤ {allowed:.0%}"
            ok = [p for p in own if p.merged["hard_negative"] <= allowed]
            best = max(
                ok, key=lambda p: (p.merged["paraphrase"], -p.merged["different"]), default=None
            )
            rows.append(_row(family, bound, best))
    return rows


def _row(family: str, bound: str, point: Point | None) -> dict[str, object]:
    if point is None:
        return {"family": family, "bound": bound}
    return {
        "family": family,
        "bound": bound,
        "min_logit_same": point.min_logit_same,
        "min_logit_confirm": point.min_logit_confirm,
        "min_cosine_confirmed": point.min_cosine_confirmed,
        "lift_doubt_at": point.lift_doubt_at,
        **{f"{kind}_merged": round(point.merged[kind], 4) for kind in KINDS},
        "distinct_merged": point.distinct_merged,
    }
