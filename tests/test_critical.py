"""Critical tokens in free text: numbers, times, days, currencies."""

from __future__ import annotations

import pytest

from dedup.critical import critical_tokens


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        ("meeting at 6 PM", ("6", "pm")),
        ("meeting at six p.m.", ("6", "pm")),
        ("meet at 6pm tomorrow", ("6", "pm", "tomorrow")),
        ("I am here", ()),
        ("You may want to call", ()),
        ("due May 5", ("5", "may")),
        ("pay $1,200.50", ("1200.5", "usd")),
        ("pay 1200.50 dollars", ("1200.5", "usd")),
        ("ship 2 boxes", ("2",)),
        ("ship two boxes", ("2",)),
        ("the 5th of March", ("5", "march")),
        ("version 1,2,3", ("1", "2", "3")),
        ("order 00123", ("123",)),
        ("see you on Friday", ("friday",)),
        ("this one please", ()),
    ],
)
def test_tokens(text: str, tokens: tuple[str, ...]) -> None:
    assert critical_tokens(text) == tokens


def test_order_of_appearance_does_not_matter() -> None:
    assert critical_tokens("at 6 on Friday") == critical_tokens("Friday at 6")
