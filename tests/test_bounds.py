"""Bounds put with "than", and a "no" that came or went before them."""

from __future__ import annotations

import pytest

from tooldedup.dedup.english.bounds import bound_reversed


@pytest.mark.parametrize(
    ("stored", "proposed", "reversed_"),
    [
        ("Submit it no later than Friday", "Submit it later than Friday", True),
        ("Order not more than 3 crates", "Order more than 3 crates", True),
        ("Order fewer than 40 chairs", "Order no fewer than 40 chairs", True),
        # The same bound both ways, or none.
        ("Submit it no later than Friday", "Submit it no later than Friday!", False),
        ("Submit it no later than Friday", "Submit it by Friday", False),
        ("Order more than 3 crates", "Order more than 3 crates today", False),
        # A text that says both forms reverses nothing.
        (
            "Order more than 3 crates, no later than Friday",
            "Order more than 3 crates, later than Friday",
            True,
        ),
        ("Order more than 3, no more than 9", "Order more than 3 and more than 9", False),
        # A negation on the verb negates the bound.
        ("It should be no more than two pages", "It shouldn't be more than two pages", False),
        ("It should not be longer than two pages", "It should be longer than two pages", True),
    ],
)
def test_bound_reversed(stored: str, proposed: str, reversed_: bool) -> None:
    assert (bound_reversed(stored, proposed) is not None) is reversed_
    assert (bound_reversed(proposed, stored) is not None) is reversed_
