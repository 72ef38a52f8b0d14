"""Facts inside free text written one way: dates, times of day, amounts of money, counts."""

from __future__ import annotations

import datetime as dt
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.helpers import canonicalize
from tooldedup.dedup.english.critical import critical_tokens
from tooldedup.dedup.english.dates import MONTH_NAMES
from tooldedup.dedup.english.facts import NUMBER_WORDS, ORDINAL_WORDS, normalize_facts
from tooldedup.dedup.policy import ToolPolicy


@pytest.mark.parametrize(
    ("text", "normal"),
    [
        # Days, with their year, as ISO.
        ("on March 5, 2026", "on 2026-03-05"),
        ("on March 5 2026", "on 2026-03-05"),
        ("on Mar. 5th, 2026", "on 2026-03-05"),
        ("on 5 March 2026", "on 2026-03-05"),
        ("on 5 Mar 2026", "on 2026-03-05"),
        ("on the 5th of March 2026", "on 2026-03-05"),
        ("on the 5th of March, 2026", "on 2026-03-05"),
        ("on the fifth of March 2026", "on 2026-03-05"),
        ("on the twenty-first of June 2026", "on 2026-06-21"),
        ("on 2026-3-5", "on 2026-03-05"),
        ("on 2026/03/05", "on 2026-03-05"),
        ("Thursday, March 5, 2026, at noon", "Thursday, 2026-03-05, at noon"),
        # Numbers that read one way only: there is no 13th month.
        ("on 13/05/2026", "on 2026-05-13"),
        ("on 05/13/2026", "on 2026-05-13"),
        ("on 05/05/2026", "on 2026-05-05"),
        # Days without a year keep it unsaid, in one spelling.
        ("on the 5th of March", "on March 5"),
        ("on March 5th", "on March 5"),
        ("on 5 March", "on March 5"),
        ("by the twenty first of June", "by June 21"),
        ("on the 29th of February", "on February 29"),
        # Times of day with am or pm, in 24 hours.
        ("at 3 PM", "at 15:00"),
        ("at 3pm", "at 15:00"),
        ("at 3 p.m. on Friday", "at 15:00 on Friday"),
        ("at 3:30 pm", "at 15:30"),
        ("at 9:30 AM", "at 09:30"),
        ("at 9.30am", "at 09:30"),
        ("at 12 AM", "at 00:00"),
        ("at 12 PM", "at 12:00"),
        ("at 3:30:15 PM", "at 15:30:15"),
        ("at 3 p.m. Then lunch.", "at 15:00. Then lunch."),
        ("meet at 3 p.m.", "meet at 15:00."),
        ("from 3 pm to 5 pm", "from 15:00 to 17:00"),
        # Amounts, as the currency's code and the number.
        ("pay $40", "pay USD 40"),
        ("pay $ 40", "pay USD 40"),
        ("pay 40 dollars", "pay USD 40"),
        ("pay a 40 dollar fee", "pay a USD 40 fee"),
        ("pay 40 USD", "pay USD 40"),
        ("pay USD 40", "pay USD 40"),
        ("pay 40 US dollars", "pay USD 40"),
        ("pay 40 U.S. dollars", "pay USD 40"),
        ("pay US$40", "pay USD 40"),
        ("pay $40 USD", "pay USD 40"),
        ("pay $1,200.50", "pay USD 1200.5"),
        ("pay $40.00.", "pay USD 40."),
        ("pay €40", "pay EUR 40"),
        ("pay 40€", "pay EUR 40"),
        ("pay 40 euros", "pay EUR 40"),
        ("pay £40", "pay GBP 40"),
        ("pay 40 British pounds", "pay GBP 40"),
        ("pay ₹500", "pay INR 500"),
        ("pay 40 Canadian dollars", "pay CAD 40"),
        ("pay 40 Hong Kong dollars", "pay HKD 40"),
        ("pay 500 yen", "pay JPY 500"),
        ("pay 500 CHF", "pay CHF 500"),
        # Counts, as digits.
        ("ship two boxes", "ship 2 boxes"),
        ("ship Twelve boxes", "ship 12 boxes"),
        ("seat twenty-five guests", "seat 25 guests"),
        ("a five-year plan", "a 5-year plan"),
        ("one or two", "one or 2"),
        # Several facts in one text.
        ("Meet on March 5, 2026 at 3 PM", "Meet on 2026-03-05 at 15:00"),
        ("Pay Ana three hundred and ten dollars", "Pay Ana three hundred and ten dollars"),
    ],
)
def test_one_spelling(text: str, normal: str) -> None:
    assert normalize_facts(text) == normal


@pytest.mark.parametrize(
    "text",
    [
        # A day that reads two ways: 3 May or 5 March.
        "on 03/05/2026",
        "on 5/3",
        "on 3.5.2026",
        # Numbers that are no day, or no date at all.
        "on February 30, 2026",
        "on the 31st of April",
        "by 2026-02-30",
        "version 1.2.3",
        "deploy v2026-3-5",
        "at 2026-03-05T10:00:00Z",
        "from 2026-3-5/2026-3-7",
        # A range: the month and year belong to both days.
        "from 5th to 7th March 2026",
        "on 5-7 March 2026",
        "on the 5th and 7th of March",
        # "may" and "march" the verbs; a month not capitalised, without a year.
        "you may want to march on",
        "5 may be enough",
        "to march 5, 2026",
        "on 5 march",
        # Short months without a year: "Jan" is a name too.
        "ask Jan 5 questions",
        # A year only two digits long, or a number after the day.
        "on 5 March 26",
        "on March 5th '26",
        # No am or pm: a time, an hour or a duration.
        "at 3",
        "at 9:30",
        "at 15:00",
        "at 03:00",
        "ran 1:30:00",
        "at 3 o'clock",
        "at noon",
        # Not a time: no 13 pm, and a range's start has no am or pm of its own.
        "at 13 pm",
        "at 0 am",
        "3-5pm",
        "3 - 5 pm",
        # Currencies that name more than one, or another amount than the number.
        "pay ¥500",
        "pay C$40",
        "pay A$40",
        "pay 40 Jamaican dollars",
        "pay 40 pounds",
        "pay $40k",
        "pay $5 million",
        "pay 40 euro cents",
        "pay $40 CAD",
        "pay -$40",
        "pay $40-50",
        # "1.200" is one or a thousand; "1,000" with decimal commas elsewhere is either.
        "pay $1.200",
        "pay 2,5 EUR and $1,000",
        # Words that are no amount.
        "order 40 sterling silver forks",
        "Ayn Rand wrote 40 Rand novels",
        # Counts that are part of a larger number, or no count.
        "two hundred",
        "in twenty twenty-six",
        "the twenty-first",
        "two point five",
        "this one please",
        "Diaz's two second-half goals",
        "built with Three.js",
        # Nothing inside backticks, URLs, emails or paths is rewritten.
        "run `date -d 'March 5, 2026'` now",
        "see https://example.com/2026-3-5/report",
        "mail march5-2026@example.com",
        "open /srv/two/5 March 2026",
    ],
)
def test_ambiguous_stays_as_written(text: str) -> None:
    assert normalize_facts(text) == text


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("Send the rent reminder on 2026-03-05", "Send the rent reminder on March 5, 2026"),
        ("The audit starts on the 5th of March 2026", "The audit starts on 2026-03-05"),
        ("Kick-off on 5 March 2026", "Kick-off on March 5, 2026"),
        ("Call at 3 PM on Thursday", "Call at 15:00 on Thursday"),
        ("Unlock the dock at 9:30 AM", "Unlock the dock at 09:30"),
        ("Reimburse Sam $40 for lunch", "Reimburse Sam 40 dollars for lunch"),
        ("Refund 40 USD to the customer", "Refund 40 US dollars to the customer"),
        ("Book three tickets", "Book 3 tickets"),
        ("the 5th of March", "March 5th"),
        ("Meet on March 5, 2026 at 3 PM", "Meet on 2026-03-05 at 15:00"),
    ],
)
def test_one_fact_two_ways(a: str, b: str) -> None:
    assert normalize_facts(a) == normalize_facts(b)
    assert critical_tokens(a) == critical_tokens(b)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("on March 5, 2026", "on March 6, 2026"),
        ("on March 5, 2026", "on March 5, 2027"),
        ("on March 5, 2026", "on May 3, 2026"),
        ("on 13/05/2026", "on 05/12/2026"),
        ("on March 5", "on March 5, 2026"),
        ("on March 5", "on 2026-03-05"),
        ("at 3 PM", "at 3 AM"),
        ("at 3 PM", "at 3"),
        ("at 15:00", "at 5:00"),
        ("at 9:30 AM", "at 9:30"),
        ("at 9:30 AM", "at 9:30 PM"),
        ("at 12 AM", "at 12 PM"),
        ("pay $40", "pay €40"),
        ("pay $40", "pay C$40"),
        ("pay $40", "pay ¥40"),
        ("pay 40 US dollars", "pay 40 Canadian dollars"),
        ("pay in US dollars", "pay in Canadian dollars"),
        ("pay USD 40", "pay EUR 40"),
        ("pay $40", "pay $40k"),
        ("pay $40", "pay 40 euro cents"),
        ("pay $1.20", "pay $1.200"),
        ("ship two boxes", "ship three boxes"),
    ],
)
def test_different_facts_stay_apart(a: str, b: str) -> None:
    assert normalize_facts(a) != normalize_facts(b)
    assert critical_tokens(a) != critical_tokens(b)


# --- properties -----------------------------------------------------------------------------

_DAYS = st.dates(min_value=dt.date(1900, 1, 1), max_value=dt.date(2199, 12, 31))
_ORDINAL = {1: "st", 2: "nd", 3: "rd", 21: "st", 22: "nd", 23: "rd", 31: "st"}


def _spell_day(day: dt.date, how: int) -> str:
    month = MONTH_NAMES[day.month - 1].title()
    suffix = _ORDINAL.get(day.day, "th")
    return [
        day.isoformat(),
        f"{day.year}-{day.month}-{day.day}",
        f"{month} {day.day}, {day.year}",
        f"{month[:3]}. {day.day}{suffix} {day.year}",
        f"{day.day} {month} {day.year}",
        f"the {day.day}{suffix} of {month}, {day.year}",
    ][how]


def _spell_time(hour: int, minute: int, how: int) -> str:
    half = "AM" if hour < 12 else "PM"
    twelve = hour % 12 or 12
    return [
        f"{hour:02d}:{minute:02d}",
        f"{twelve}:{minute:02d} {half}",
        f"{twelve}:{minute:02d}{half.lower()}",
        f"{twelve}:{minute:02d} {half[0].lower()}.m.",
    ][how]


_AMOUNT_SPELLINGS = {
    "USD": ["${}", "{} dollars", "{} USD", "USD {}", "{} US dollars"],
    "EUR": ["€{}", "{} euros", "{} EUR", "EUR {}"],
    "GBP": ["£{}", "{} GBP", "{} British pounds"],
    "CAD": ["{} CAD", "{} Canadian dollars"],
}
_WORDS = st.sampled_from(
    "meet the team on at by send pay Ana March May may second one am pm PM dollars "
    "euros pounds yen you we Friday next week, please. the of and to fifth first".split()
)
_FRAGMENTS = st.one_of(
    _WORDS,
    st.builds(_spell_day, _DAYS, st.integers(0, 5)),
    st.builds(_spell_time, st.integers(0, 23), st.integers(0, 59), st.integers(0, 3)),
    st.builds(
        lambda code, how, n: _AMOUNT_SPELLINGS[code][how % len(_AMOUNT_SPELLINGS[code])].format(n),
        st.sampled_from(sorted(_AMOUNT_SPELLINGS)),
        st.integers(0, 4),
        st.integers(0, 100_000),
    ),
    st.sampled_from(sorted(NUMBER_WORDS)),
    st.from_regex(r"\d{1,4}([:/.,-]\d{1,4}){0,2}", fullmatch=True),
)
_TEXTS = st.lists(_FRAGMENTS, max_size=12).map(" ".join)


@given(st.one_of(_TEXTS, st.text(max_size=80)))
def test_normalizing_twice_changes_nothing(text: str) -> None:
    once = normalize_facts(text)
    assert normalize_facts(once) == once
    assert critical_tokens(text) == critical_tokens(once)


@given(_DAYS, _DAYS, st.integers(0, 5), st.integers(0, 5))
def test_two_days_never_meet(first: dt.date, second: dt.date, how: int, other: int) -> None:
    a = normalize_facts(f"Send it on {_spell_day(first, how)} please")
    b = normalize_facts(f"Send it on {_spell_day(second, other)} please")
    assert (a == b) == (first == second)
    assert (critical_tokens(a) == critical_tokens(b)) == (first == second)


@given(st.integers(0, 23), st.integers(0, 59), st.integers(0, 23), st.integers(0, 59))
def test_two_times_never_meet(hour: int, minute: int, other_hour: int, other_minute: int) -> None:
    same = (hour, minute) == (other_hour, other_minute)
    for how in range(4):
        a = normalize_facts(f"Call at {_spell_time(hour, minute, how)} today")
        b = normalize_facts(f"Call at {_spell_time(other_hour, other_minute, 3 - how)} today")
        assert (a == b) == same
        assert (critical_tokens(a) == critical_tokens(b)) == same


@given(
    st.sampled_from(sorted(_AMOUNT_SPELLINGS)),
    st.sampled_from(sorted(_AMOUNT_SPELLINGS)),
    st.integers(0, 10_000),
    st.integers(0, 10_000),
    st.integers(0, 4),
)
def test_two_amounts_never_meet(code: str, other: str, n: int, m: int, how: int) -> None:
    same = (code, n) == (other, m)
    a_spelling = _AMOUNT_SPELLINGS[code][how % len(_AMOUNT_SPELLINGS[code])]
    b_spelling = _AMOUNT_SPELLINGS[other][(how + 1) % len(_AMOUNT_SPELLINGS[other])]
    a = normalize_facts(f"Refund {a_spelling.format(n)} to Ana")
    b = normalize_facts(f"Refund {b_spelling.format(m)} to Ana")
    assert (a == b) == same
    assert (critical_tokens(a) == critical_tokens(b)) == same


_NUMBER_WORD = re.compile(
    rf"\b(?:{'|'.join([*NUMBER_WORDS, *ORDINAL_WORDS, 'first', 'second'])})\b", re.IGNORECASE
)


@given(
    st.one_of(
        st.lists(_WORDS, max_size=16).map(" ".join),
        st.text(st.characters(exclude_categories=["Nd"]), max_size=80),
    )
)
def test_no_fact_no_change(text: str) -> None:
    # No digit and no number word: nothing is a date, a time, an amount or a count.
    if not _NUMBER_WORD.search(text):
        assert normalize_facts(text) == text


@pytest.mark.parametrize(
    "text",
    [
        "1" * 65_536,
        "the 5th of " * 6_000,
        "$" * 65_536,
        "$1 " * 21_000,
        "/a" * 32_768,
        "3 pm " * 13_000,
        "twenty " * 9_000,
        "1 March " * 8_000,
    ],
    ids=lambda text: repr(text[:6]),
)
def test_a_hostile_text_of_the_largest_size_is_read(text: str) -> None:
    # Each pass is one scan without nested repeats: a text of max_text_chars comes back, and
    # what it states is kept.
    assert critical_tokens(normalize_facts(text)) == critical_tokens(text)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("Send the rent reminder to all tenants on 2026-03-05", "… on March 5, 2026"),
        ("Our call is at 3 PM on Thursday", "Our call is at 15:00 on Thursday"),
        ("Refund 40 USD to the customer", "Refund 40 US dollars to the customer"),
    ],
)
def test_the_signature_holds_the_facts_once(a: str, b: str) -> None:
    # The exact signature holds a text's critical tokens, read from its facts in one spelling:
    # two spellings of a fact are candidates for each other.
    b = b.replace("…", "Send the rent reminder to all tenants")
    one = canonicalize({"message": a}, ToolPolicy())
    two = canonicalize({"message": b}, ToolPolicy())
    assert one.exact_signature == two.exact_signature
