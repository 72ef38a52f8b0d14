"""Critical tokens in free text: numbers, dates, times, units, currencies."""

from __future__ import annotations

import pytest

from tooldedup.dedup.critical import critical_tokens


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        ("meeting at 6 PM", ("6pm",)),
        ("meeting at six p.m.", ("6pm",)),
        ("meet at 6pm tomorrow", ("6pm", "tomorrow")),
        ("I am here", ()),
        ("You may want to call", ()),
        ("due May 5", ("5", "may")),
        ("pay $1,200.50", ("1200.5", "usd")),
        ("pay 1200.50 dollars", ("1200.5", "usd")),
        ("ship 2 boxes", ("2",)),
        ("ship two boxes", ("2",)),
        ("the 5th of March", ("5", "march", "ord")),
        ("the third Friday", ("3", "friday", "ord")),
        ("version 1,2,3", ("1", "2", "3")),
        ("order 00123", ("123",)),
        ("see you on Friday", ("friday",)),
        ("this one please", ()),
        ("on 2024-03-05 at 10:05", ("10:5", "2024-3-5")),
        ("thirty-one chairs", ("31",)),
        ("-18 degrees", ("-18",)),
        (".5 mg", ("0.5", "mg")),
        ("500 CHF", ("500", "chf")),
        ("please do not approve it", ("not",)),
        ("don't send it", ("not",)),
        ("2 to 3 days", ("2", "3")),
    ],
)
def test_tokens(text: str, tokens: tuple[str, ...]) -> None:
    assert critical_tokens(text) == tokens


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("from 6 AM to 8 PM", "from 6 PM to 8 AM"),
        ("2024-03-05", "2024-05-03"),
        ("at 10:05", "at 5:10"),
        ("thirty-one chairs", "thirty chairs"),
        ("the third Friday", "the fourth Friday"),
        ("-18 degrees", "18 degrees"),
        (".5 mg", "5 mg"),
        ("500 CHF", "500 CAD"),
        ("5 kg", "5 lb"),
        ("123456789012345678901234567890", "123456789012345678901234567891"),
        ("Please approve the request.", "Please do not approve the request."),
    ],
)
def test_changed_values_are_told_apart(a: str, b: str) -> None:
    assert critical_tokens(a) != critical_tokens(b)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("$100", "100 dollars"),
        ("Pay 1,200.50 today", "pay 1200.5 today"),
        ("meet at 6 PM", "meet at six p.m."),
        ("on 2024-03-05", "on 2024-3-5"),
        ("at 6 on Friday", "Friday at 6"),
    ],
)
def test_same_values_written_differently_agree(a: str, b: str) -> None:
    assert critical_tokens(a) == critical_tokens(b)
