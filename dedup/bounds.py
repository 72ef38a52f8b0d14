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
_NEGATED = re.compile(rf"\b(?:no|not)\s+({_COMPARATIVES})\s+than\b")
_BARE = re.compile(rf"\b(?<!no )(?<!not )({_COMPARATIVES})\s+than\b")


def bound_reversed(stored: str, proposed: str) -> str | None:
    """A bound negated in one text and stated bare in the other: "no later than Friday" /
    "later than Friday", "not more than 3" / "more than 3"."""
    first, second = stored.lower(), proposed.lower()
    for negated_in, bare_in in ((first, second), (second, first)):
        negated = set(_NEGATED.findall(negated_in)) - set(_BARE.findall(negated_in))
        bare = set(_BARE.findall(bare_in)) - set(_NEGATED.findall(bare_in))
        if common := sorted(negated & bare):
            return f"a bound was reversed: no {common[0]} than → {common[0]} than"
    return None
