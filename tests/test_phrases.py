"""One phrase put for another, and what excuses it."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tooldedup.dedup.english.lexicon import words
from tooldedup.dedup.english.phrases import excused, phrase_swap


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
    ("before", "after", "texts", "expected"),
    [
        # Short forms written in capitals, or one word split.
        (("po",), ("purchase", "order"), ("Send the PO today", ""), True),
        (("eta",), ("expected", "arrival", "time"), ("Send me the ETA", ""), True),
        (("q", "a"), ("questions", "answers"), ("Add a Q&A slot", ""), True),
        (("iems",), ("ear", "monitors"), ("Book 2 IEMs", ""), True),
        (("copay",), ("co", "payment"), ("", ""), True),
        # Initials in lower case, small words included as written; a clipped word.
        (("eod",), ("end", "day"), ("", "send it by end of day"), True),
        (("wfh",), ("working", "home"), ("", "I'm working from home"), True),
        (("prod",), ("production", "environment"), ("", ""), True),
        # One short form for another is one thing for another.
        (("ssh",), ("aws", "access"), ("Rotate the SSH keys", "Rotate the AWS access keys"), False),
        # Lower case is no short form: "cab" is no "city bus".
        (("cab",), ("city", "bus"), ("Book a cab", ""), False),
        (("po",), ("purchase", "order"), ("send the po today", ""), False),
        # Negations, phrasal and light verbs.
        (("not", "safe"), ("unsafe",), ("", ""), True),
        (("pick", "up"), ("get",), ("", ""), True),
        (("enroll",), ("sign", "up"), ("", ""), True),
        (("let", "know"), ("tell",), ("", ""), True),
        (("put", "together"), ("draft",), ("", ""), True),
        # A phrasal verb for a verb of the opposites list hides a reversal.
        (("book",), ("call", "off"), ("", ""), False),
        (("approve",), ("turn", "down"), ("", ""), False),
        (("forklift",), ("reach", "truck"), ("", ""), False),
        (("lemonade",), ("iced", "tea"), ("", ""), False),
    ],
)
def test_excused(
    before: tuple[str, ...], after: tuple[str, ...], texts: tuple[str, str], expected: bool
) -> None:
    assert excused((before, after), *texts) is expected


_WORD = st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=1, max_size=8)
_SIDE = st.lists(_WORD, min_size=1, max_size=3).map(tuple)


@given(_SIDE, _SIDE, st.text(max_size=40))
def test_an_excuse_reads_both_ways(
    before: tuple[str, ...], after: tuple[str, ...], text: str
) -> None:
    assert excused((before, after), text, text) == excused((after, before), text, text)
