"""Critical tokens inside free text: numbers, times, dates and currencies.

Meaning is compared only on free text, and even there a number is never fuzzed:
"meeting at 6 PM" and "meeting at 8 PM" embed almost identically but are
different intents. The tokens found here join a call's exact signature.
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation

__all__ = ["critical_tokens"]

_NUMBER_WORDS = {
    "zero": "0",
    "two": "2",
    "three": "3",
    "four": "4",
    "five": "5",
    "six": "6",
    "seven": "7",
    "eight": "8",
    "nine": "9",
    "ten": "10",
    "eleven": "11",
    "twelve": "12",
    "thirteen": "13",
    "fourteen": "14",
    "fifteen": "15",
    "sixteen": "16",
    "seventeen": "17",
    "eighteen": "18",
    "nineteen": "19",
    "twenty": "20",
    "thirty": "30",
    "forty": "40",
    "fifty": "50",
    "sixty": "60",
    "seventy": "70",
    "eighty": "80",
    "ninety": "90",
    "hundred": "100",
    "thousand": "1000",
    "million": "1000000",
    "billion": "1000000000",
    "dozen": "12",
}
# "one" is left out on purpose: as a pronoun it is too common in paraphrases.
_DAY_WORDS = frozenset(
    {
        "monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday",
        "today", "tomorrow", "yesterday", "tonight", "noon", "midnight",
        "january", "february", "march", "april", "june", "july", "august",
        "september", "october", "november", "december",
    }
)  # fmt: skip
# Words that are dates only next to a number ("may" is a verb, "mar" a noun).
_MONTH_ABBREV = {
    "jan": "january", "feb": "february", "mar": "march", "apr": "april",
    "may": "may", "jun": "june", "jul": "july", "aug": "august", "sep": "september",
    "sept": "september", "oct": "october", "nov": "november", "dec": "december",
}  # fmt: skip
_CURRENCY = {
    "$": "usd", "€": "eur", "£": "gbp", "¥": "jpy", "₹": "inr",
    "usd": "usd", "eur": "eur", "gbp": "gbp", "jpy": "jpy", "inr": "inr",
    "dollars": "usd", "dollar": "usd", "euros": "eur", "euro": "eur", "pounds": "gbp",
}  # fmt: skip

_TOKEN = re.compile(
    r"(?P<num>\d[\d,]*(?:\.\d+)?)(?:\s*(?P<ampm>[ap]\.?m\.?)(?![a-z]))?"
    r"|(?P<word>[^\W\d_]+)"
    r"|(?P<sym>[$€£¥₹])",
    re.IGNORECASE,
)
_DOTTED_AMPM = re.compile(r"\b([ap])\.\s?m\b\.?", re.IGNORECASE)
_THOUSANDS = re.compile(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?")


def _normal_number(text: str) -> list[str]:
    parts = [text.replace(",", "")] if _THOUSANDS.fullmatch(text) else text.split(",")
    out = []
    for part in parts:
        if not part:
            continue
        try:
            value = Decimal(part)
        except InvalidOperation:  # pragma: no cover - the regex admits only digits
            out.append(part)
            continue
        text_value = format(value.normalize(), "f")
        out.append(text_value)
    return out


def critical_tokens(text: str) -> tuple[str, ...]:
    """The sorted multiset of numbers, dates, times and currencies in ``text``."""
    tokens: list[str] = []
    matches = list(_TOKEN.finditer(_DOTTED_AMPM.sub(r"\1m", text)))
    for i, m in enumerate(matches):
        if m.group("num"):
            tokens.extend(_normal_number(m.group("num")))
            if m.group("ampm"):
                tokens.append(m.group("ampm").replace(".", "").lower())
            continue
        if m.group("sym"):
            tokens.append(_CURRENCY[m.group("sym")])
            continue
        word = m.group("word").lower()
        if word in _NUMBER_WORDS:
            tokens.append(_NUMBER_WORDS[word])
        elif word in _DAY_WORDS:
            tokens.append(word)
        elif word in _CURRENCY:
            tokens.append(_CURRENCY[word])
        elif word in ("am", "pm") and i and _is_number(matches[i - 1]):
            tokens.append(word)
        elif word in _MONTH_ABBREV and _next_to_number(matches, i):
            tokens.append(_MONTH_ABBREV[word])
    return tuple(sorted(tokens))


def _is_number(m: re.Match[str]) -> bool:
    return bool(m.group("num")) or (m.group("word") or "").lower() in _NUMBER_WORDS


def _next_to_number(matches: list[re.Match[str]], i: int) -> bool:
    neighbours = [matches[j] for j in (i - 1, i + 1) if 0 <= j < len(matches)]
    return any(_is_number(n) for n in neighbours)
