"""Bounds put with "than": "no later than Friday" is "by Friday", and "later than Friday" is
its opposite.

The lexicon folds a negated bound into one spelling ("no more than 50" is "at most 50"),
which hides the "no" from the negation count; a bound whose "no" came or went is checked
here instead.
"""

from __future__ import annotations

import re

__all__ = ["bound_reversed"]

_COMPARATIVES = "later|earlier|sooner|more|less|fewer|longer|shorter|higher|lower"
_THAN = re.compile(rf"\b({_COMPARATIVES})\s+than\b")
# A negation within the four words before a bound, in its clause, negates it: "should not
# be more than two pages".
_NEGATION = re.compile(r"\b(?:no|not|never|cannot)\b|n['\u2019]t\b")
_CLAUSE_END = re.compile(r"[,;:.!?]")
_LOOK_BACK = 60


def _bounds(text: str) -> tuple[set[str], set[str]]:
    """The comparatives a text puts with "than", negated and bare."""
    negated: set[str] = set()
    bare: set[str] = set()
    for found in _THAN.finditer(text):
        # Only the clause's last few words: a hostile text of many bounds costs no more
        # than a plain one.
        window = text[max(0, found.start() - _LOOK_BACK) : found.start()]
        before = _CLAUSE_END.split(window)[-1].split()[-4:]
        (negated if _NEGATION.search(" ".join(before)) else bare).add(found.group(1))
    return negated, bare


def bound_reversed(stored: str, proposed: str) -> str | None:
    """A bound negated in one text and stated bare in the other: "no later than Friday" /
    "later than Friday", "not more than 3" / "more than 3"."""
    (negated_a, bare_a), (negated_b, bare_b) = _bounds(stored.lower()), _bounds(proposed.lower())
    for negated, also_bare, bare, also_negated in (
        (negated_a, bare_a, bare_b, negated_b),
        (negated_b, bare_b, bare_a, negated_a),
    ):
        if common := sorted((negated - also_bare) & (bare - also_negated)):
            return f"a bound was reversed: no {common[0]} than → {common[0]} than"
    return None
