"""Dates and times of day written in the common ways, read to one form each."""

from __future__ import annotations

import datetime as dt
import re

__all__ = ["MONTHS", "MONTH_NAMES", "date_key", "iso_day", "time_key"]

# Each month's name, then its short forms: the one list of months (``critical.py`` and
# ``facts.py`` read it too).
_MONTH_SPELLINGS = (
    ("january", "jan"), ("february", "feb"), ("march", "mar"), ("april", "apr"), ("may",),
    ("june", "jun"), ("july", "jul"), ("august", "aug"), ("september", "sep", "sept"),
    ("october", "oct"), ("november", "nov"), ("december", "dec"),
)  # fmt: skip
# "january" first, "december" last.
MONTH_NAMES: tuple[str, ...] = tuple(names[0] for names in _MONTH_SPELLINGS)
# Every name and short form, lower case, to the month's number: "sept" is 9.
MONTHS: dict[str, int] = {
    name: number for number, names in enumerate(_MONTH_SPELLINGS, start=1) for name in names
}
_ISO_DAY = re.compile(r"(\d{4})([-/.])(\d{1,2})\2(\d{1,2})")
_NUMERIC_DAY = re.compile(r"(\d{1,2})([-/.])(\d{1,2})\2(\d{4})")
_MONTH_FIRST = re.compile(r"([a-z]+)\.? (\d{1,2})(?:st|nd|rd|th)?,? (\d{4})")
_DAY_FIRST = re.compile(r"(\d{1,2})(?:st|nd|rd|th)? (?:of )?([a-z]+)\.?,? (\d{4})")
_DATETIME = re.compile(
    r"\d{4}-\d{2}-\d{2}[t ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,6})?)?(?:z|[+-]\d{2}:?\d{2})?"
)
_DOT_BEFORE_DAY = re.compile(r"(?<=[a-z])\.(?=\d)")
_TIME = re.compile(r"(\d{1,2})(?::(\d{2})(?::(\d{2}))?)?(?: ?([ap])\.? ?m\.?)?")
_NAMED_TIMES = {"noon": "12:00:00", "midday": "12:00:00", "midnight": "00:00:00"}


def iso_day(year: int, month: int, day: int) -> str | None:
    """The day as ISO ("2026-03-05"), or None when there is no such day."""
    try:
        return dt.date(year, month, day).isoformat()
    except ValueError:
        return None


def _moment(value: str) -> str | None:
    try:
        moment = dt.datetime.fromisoformat(value.upper())
        if moment.tzinfo is not None:
            moment = moment.astimezone(dt.UTC)
    except (ValueError, OverflowError):  # "0001-01-01T00:00+01:00" is before year 1 in UTC
        return None
    return moment.isoformat()


def date_key(text: str) -> str | None:
    """One form of a date or date-time written in a common way, or None for no date.

    ISO for a day named unambiguously ("2020-01-02", "January 2, 2020", "02/13/2020") and
    for an ISO date-time (in UTC when it has a zone). Numbers that read two ways
    ("01/02/2020": 2 January or 1 February) keep their order and separator, so they equal
    only the same numbers written the same way.
    """
    value = " ".join(text.casefold().replace(",", ", ").split())
    value = _DOT_BEFORE_DAY.sub(". ", value)  # "Jun.1,2022"
    if match := _ISO_DAY.fullmatch(value):
        return iso_day(int(match[1]), int(match[3]), int(match[4]))
    if match := _NUMERIC_DAY.fullmatch(value):
        first, second, year = int(match[1]), int(match[3]), int(match[4])
        if first == second or second > 12:
            return iso_day(year, first, second)
        if first > 12:
            return iso_day(year, second, first)
        return f"{first:02d}{match[2]}{second:02d}{match[2]}{year}"
    if match := _MONTH_FIRST.fullmatch(value):
        month = MONTHS.get(match[1])
        return None if month is None else iso_day(int(match[3]), month, int(match[2]))
    if match := _DAY_FIRST.fullmatch(value):
        month = MONTHS.get(match[2])
        return None if month is None else iso_day(int(match[3]), month, int(match[1]))
    if _DATETIME.fullmatch(value):
        return _moment(value)
    return None


def time_key(text: str) -> str | None:
    """A time of day as HH:MM:SS, or None.

    "3pm", "3:00 p.m." and "15:00" agree. Without am or pm the hour must have two digits:
    "1:30" may be a time or a minute and a half, and stays as written.
    """
    value = " ".join(text.casefold().split())
    if value in _NAMED_TIMES:
        return _NAMED_TIMES[value]
    match = _TIME.fullmatch(value)
    if match is None:
        return None
    hour, minute, second = int(match[1]), int(match[2] or 0), int(match[3] or 0)
    if match[4]:
        if not 1 <= hour <= 12:
            return None
        hour = hour % 12 + (12 if match[4] == "p" else 0)
    elif match[2] is None or len(match[1]) < 2:
        return None
    if hour > 23 or minute > 59 or second > 59:
        return None
    return f"{hour:02d}:{minute:02d}:{second:02d}"
