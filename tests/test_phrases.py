"""One phrase put for another, and what excuses it."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tooldedup.dedup.lexicon import words
from tooldedup.dedup.phrases import excused, phrase_swap


@pytest.mark.parametrize(
    ("old", "new", "phrase"),
    [
        (
            "put Kofi on forklift 2",
            "put Kofi on reach truck 2",
            (("forklift",), ("reach", "truck")),
        ),
        ("send the PO today", "send the purchase order today", (("po",), ("purchase", "order"))),
        # One word for one word is a swap, not a phrase.
        ("book a big room", "book a large room", None),
        # Two changes, or a phrase added, are no phrase swap.
        ("book a big room on Monday for Ana", "book a large room on Tuesday for Ana", None),
        ("book a room", "book a room and a projector", None),
        # Longer than three words on a side: a rewording.
        ("send it by courier", "send it with the overnight express parcel service", None),
    ],
)
def test_phrase_swap(old: str, new: str, phrase: object) -> None:
    assert phrase_swap(words(old), words(new)) == phrase


@pytest.mark.parametrize(
    ("before", "after", "expected"),
    [
        (("po",), ("purchase", "order"), True),
        (("t", "cs"), ("terms", "conditions"), True),
        (("hmrc",), ("hm", "revenue", "customs"), True),
        (("copay",), ("co", "payment"), True),
        (("not", "safe"), ("unsafe",), True),
        (("unwilling",), ("refuse", "outright"), True),
        (("pick", "up"), ("get",), True),
        (("enroll",), ("sign", "up"), True),
        (("let", "know"), ("tell",), True),
        (("forklift",), ("reach", "truck"), False),
        (("lemonade",), ("iced", "tea"), False),
        # Initials must all be there, in order.
        (("rp",), ("purchase", "order"), False),
        (("procurement",), ("purchase", "order"), False),
    ],
)
def test_excused(before: tuple[str, ...], after: tuple[str, ...], expected: bool) -> None:
    assert excused((before, after)) is expected


_WORD = st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=1, max_size=8)
_SIDE = st.lists(_WORD, min_size=1, max_size=3).map(tuple)


@given(_SIDE, _SIDE)
def test_an_excuse_reads_both_ways(before: tuple[str, ...], after: tuple[str, ...]) -> None:
    assert excused((before, after)) == excused((after, before))
