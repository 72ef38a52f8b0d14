"""Facts inside free text written one way: dates, times of day, amounts of money, counts.

An agent that retries a call may write "March 5, 2026" for "2026-03-05", "3 PM" for "15:00",
"40 dollars" for "$40" or "three" for "3". Each span that reads one way only is rewritten to
one spelling, as the exact fields read theirs (``dates.py``, ``values.py``): a
day as ISO ("2026-03-05"), a day without its year as "March 5", a time of day in 24 hours
("15:00"), an amount as its currency's code and its number ("USD 40"), a count as digits. So
two spellings of one fact are one text, and share their critical tokens.

A span that reads two ways stays as written: "03/05/2026" (March or May), "at 3" and "9:30"
(no am or pm: a time, an hour or a duration), "¥500" (yen or yuan), "C$40" (Canadian dollars or
córdobas), "40 pounds" (money or weight), "one" (a pronoun too), "you may", a day without a
year (no year is guessed). Nothing inside backticks, a URL, an email or a path is rewritten.
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Callable, Iterable

from tooldedup.dedup.english.dates import MONTH_NAMES, MONTHS, date_key, iso_day, time_key
from tooldedup.dedup.english.value_names import CURRENCY_NAMES

__all__ = [
    "COMPOUND_UNITS",
    "CURRENCY_CODES",
    "CURRENCY_SIGNS",
    "DECIMAL_COMMA",
    "NUMBER_WORDS",
    "ORDINAL_WORDS",
    "TENS",
    "normalize_facts",
]

# The number words, one list for the critical tokens (``critical.py``) and for counts.
NUMBER_WORDS = {
    "zero": "0", "two": "2", "three": "3", "four": "4", "five": "5", "six": "6",
    "seven": "7", "eight": "8", "nine": "9", "ten": "10", "eleven": "11", "twelve": "12",
    "thirteen": "13", "fourteen": "14", "fifteen": "15", "sixteen": "16",
    "seventeen": "17", "eighteen": "18", "nineteen": "19", "twenty": "20", "thirty": "30",
    "forty": "40", "fifty": "50", "sixty": "60", "seventy": "70", "eighty": "80",
    "ninety": "90", "hundred": "100", "thousand": "1000", "million": "1000000",
    "billion": "1000000000", "dozen": "12", "half": "0.5",
}  # fmt: skip
# "one", "first" and "second" are left out on purpose: as a pronoun, an adverb and a unit
# of time they are too common in paraphrases. Digits ("1", "1st") always count, and a
# swap of bare ordinals is the verifier's to hold (``dedup/verifier.py``).
ORDINAL_WORDS = {
    "third": "3", "fourth": "4", "fifth": "5", "sixth": "6", "seventh": "7", "eighth": "8",
    "ninth": "9", "tenth": "10", "eleventh": "11", "twelfth": "12", "thirteenth": "13",
    "fourteenth": "14", "fifteenth": "15", "sixteenth": "16", "seventeenth": "17",
    "eighteenth": "18", "nineteenth": "19", "twentieth": "20", "thirtieth": "30",
    "fortieth": "40", "fiftieth": "50", "sixtieth": "60", "seventieth": "70",
    "eightieth": "80", "ninetieth": "90", "hundredth": "100", "thousandth": "1000",
}  # fmt: skip
TENS = {
    "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70,
    "eighty": 80, "ninety": 90,
}  # fmt: skip
# The second word of "twenty-one" or "thirty-first": its value and an ordinal's suffix.
COMPOUND_UNITS = {
    "one": (1, ""), "two": (2, ""), "three": (3, ""), "four": (4, ""), "five": (5, ""),
    "six": (6, ""), "seven": (7, ""), "eight": (8, ""), "nine": (9, ""), "first": (1, "st"),
    "second": (2, "nd"), "third": (3, "rd"), "fourth": (4, "th"), "fifth": (5, "th"),
    "sixth": (6, "th"), "seventh": (7, "th"), "eighth": (8, "th"), "ninth": (9, "th"),
}  # fmt: skip

# Currency signs as prose writes them before an amount. Where ``value_names`` leaves a sign
# out because it names more than one currency, prose reads "$" and "£" as agents mean them,
# as the critical tokens always have; "¥" (yen or yuan) and "C$", "A$", … keep their form.
CURRENCY_SIGNS = {"$": "usd", "us$": "usd", "€": "eur", "£": "gbp", "₹": "inr"}
# ISO codes: every currency ``value_names`` names.
CURRENCY_CODES = frozenset(CURRENCY_NAMES.values())
# "1.000" is one in English and a thousand in German; "1,000" is a thousand, unless the text
# writes decimals with a comma ("2,5 kg"). Such a number is no amount to rewrite.
DECIMAL_COMMA = re.compile(r"(?<![\d.,])\d+,(?:\d{1,2}|\d{4,})(?![\d,])|\d\.\d{3},\d")
_DOT_THOUSAND = re.compile(r"\d{1,3}\.\d{3}")
# Currency signs, which no number after them is read without ("¥500", "₩500", "C$40").
_SIGNS = "$\u00a2\u00a3\u00a5\u20a9\u20aa\u20ab\u20ac\u20b1\u20b4\u20b9\u20ba\u20bd\u0e3f"
_CODE_PATTERN = "|".join(sorted(code.upper() for code in CURRENCY_CODES))
# A number after a currency's code is an amount, never a day or an hour: "USD 3 pm".
_CODE_BEFORE = re.compile(rf"\b(?:{_CODE_PATTERN})\s?$")

# --- where nothing is rewritten -------------------------------------------------------------

_BACKTICKS = re.compile(r"`[^`\n]{1,500}`")
_WORDS = re.compile(r"\S+")


def _protected(text: str) -> list[tuple[int, int]]:
    """Spans kept as written: backticks, and words that are URLs, emails or paths. Linear:
    each whitespace-separated word is tested on its own."""
    if "@" not in text and "/" not in text and "`" not in text:
        return []
    spans = [m.span() for m in _BACKTICKS.finditer(text)]
    for m in _WORDS.finditer(text):
        word = m.group()
        if (
            "@" in word
            or "://" in word
            or word.lstrip("\"'(<[").startswith(("/", "~/", "./", "../"))
        ):
            spans.append(m.span())
    spans.sort()
    merged: list[tuple[int, int]] = []
    for start, end in spans:
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


def _initials(words: Iterable[str]) -> str:
    """The first letters of ``words``, in both cases: a character class's contents."""
    letters = sorted({w[0] for w in words})
    return "".join(letters) + "".join(letters).upper()


# --- counts ---------------------------------------------------------------------------------

# "two" to "nineteen" and the tens; not "a dozen" nor "zero" ("zero trust").
_COUNT_WORDS = {
    w: v
    for w, v in NUMBER_WORDS.items()
    if w in TENS or (w != "dozen" and v.isdigit() and 2 <= int(v) <= 19)
}
_CARDINAL_UNITS = {w: v for w, (v, suffix) in COMPOUND_UNITS.items() if not suffix}
# A count stands alone: next to another number word ("two hundred", "twenty twenty-six",
# "one or two" is fine) it is part of a larger number, and stays a word.
_NUMBERISH = frozenset(
    {*NUMBER_WORDS, *ORDINAL_WORDS, "one", "first", "second", "point", "trillion", "score"}
)
_ALL_WORDS = "|".join(sorted({*_NUMBERISH, *_CARDINAL_UNITS}, key=len, reverse=True))
_COUNT = re.compile(
    rf"(?=[{_initials(_COUNT_WORDS)}])(?<![\w.'-])"
    rf"(?:(?P<tens>{'|'.join(TENS)})(?:-(?P<unit>{'|'.join(_CARDINAL_UNITS)}))?"
    rf"|(?P<word>{'|'.join(sorted(_COUNT_WORDS, key=len, reverse=True))}))(?![\w'])",
    re.IGNORECASE,
)
_NUMBER_BEFORE = re.compile(
    rf"(?:(?<![^\W\d_])(?:{_ALL_WORDS})|\d)(?:\s*-\s*|\s+(?:and\s+|&\s+)?)$", re.IGNORECASE
)
_NUMBER_AFTER = re.compile(rf"(?:-|\s+)(?:{_ALL_WORDS})\b|\.\w", re.IGNORECASE)


def _count(text: str, m: re.Match[str]) -> str:
    if _NUMBER_BEFORE.search(text[max(0, m.start() - 16) : m.start()]) or _NUMBER_AFTER.match(
        text, m.end()
    ):
        return m.group()
    if m.group("word"):
        return NUMBER_WORDS[m.group("word").lower()]
    unit = _CARDINAL_UNITS[m.group("unit").lower()] if m.group("unit") else 0
    return str(TENS[m.group("tens").lower()] + unit)


# --- dates ----------------------------------------------------------------------------------

_MONTH = "|".join(sorted(MONTHS, key=len, reverse=True))
_FULL_MONTH = "|".join(sorted(MONTH_NAMES, key=len, reverse=True))
_DAY_ORDINALS = {
    **{w: int(v) for w, v in ORDINAL_WORDS.items() if int(v) <= 20 or v == "30"},
    "first": 1, "second": 2,
    **{
        f"{tens}-{unit}": value + extra
        for tens, value in TENS.items()
        if value <= 30
        for unit, (extra, suffix) in COMPOUND_UNITS.items()
        if suffix and value + extra <= 31
    },
}  # fmt: skip
_DAY_WORD = "|".join(w.replace("-", r"[-\s]") for w in sorted(_DAY_ORDINALS, key=len, reverse=True))
_YEAR = r"(?P<year>1[6-9]\d\d|2\d\d\d)"
# Nothing that continues a number or a date: "2026-03-05T10:00", "5.3.2026", "March 5, 2026-27".
_END = r"(?![\w/]|[-.,:/]\d)"
_NUMERIC_DATE = re.compile(
    rf"(?<![\w./:,{_SIGNS}-])"
    rf"(?:\d{{4}}([-/])\d{{1,2}}\1\d{{1,2}}|\d{{1,2}}([-/])\d{{1,2}}\2\d{{4}}){_END}"
)
_MONTH_FIRST = re.compile(
    rf"(?=[{_initials(MONTHS)}])\b(?P<month>{_MONTH})\.?\s+(?P<day>\d{{1,2}})(?:st|nd|rd|th)?"
    rf"(?:,\s*|\s+){_YEAR}{_END}",
    re.IGNORECASE,
)
# A day without its year; the month is named in full and capitalised ("you may", "to march").
# Nor a number after it ("5 March 26"), nor an amount (the number may have been its year).
_NO_YEAR = rf"(?!\s*,?\s*(?:['\u2019]|(?:{_CODE_PATTERN})\s)?\d)"
_MONTH_FIRST_ORDINAL = re.compile(
    rf"(?=[{_initials(MONTHS)}])\b(?P<month>{_FULL_MONTH})\s+(?P<day>\d{{1,2}})"
    rf"(?:st|nd|rd|th)\b{_NO_YEAR}",
    re.IGNORECASE,
)


def _day_first(month: str, tail: str, words: bool) -> re.Pattern[str]:
    """A day before its month ("5 March", "the 5th of March" and, with ``words``, "the fifth
    of March"), then ``tail``. The first character is looked ahead for: most places fail at
    once."""
    first = "\\d" + _initials(["the", *_DAY_ORDINALS] if words else ["the"])
    word = _DAY_WORD if words else "(?!)"
    return re.compile(
        rf"(?=[{first}])(?:\b(?P<the>the)\s+)?(?<![\w./:,{_SIGNS}-])"
        rf"(?:(?P<day>\d{{1,2}})(?P<suffix>st|nd|rd|th)?|(?P<word>{word}))"
        rf"\s+(?:(?P<of>of)\s+)?(?P<month>{month}){tail}",
        re.IGNORECASE,
    )


_DAY_FIRST = _day_first(_MONTH, rf"\.?,?\s+{_YEAR}{_END}", words=False)
_DAY_FIRST_WORDS = _day_first(_MONTH, rf"\.?,?\s+{_YEAR}{_END}", words=True)
_DAY_FIRST_NO_YEAR = _day_first(_FULL_MONTH, rf"\b{_NO_YEAR}", words=False)
_DAY_FIRST_NO_YEAR_WORDS = _day_first(_FULL_MONTH, rf"\b{_NO_YEAR}", words=True)
_ORDINAL_KEYS = frozenset(w for name in _DAY_ORDINALS for w in name.split("-"))
# "5th-7th March 2026", "from 5 to 7 March": the month and year belong to both days.
_RANGE_BEFORE = re.compile(
    rf"(?:(?<![\d/:.-])\d{{1,2}}(?:st|nd|rd|th)?|\b(?:{_DAY_WORD}))\s*"
    r"(?:[-\u2013\u2014&]|\bto|\band|\bor|\bthrough|\bthru|\buntil|\btill)\s*$",
    re.IGNORECASE,
)


# "March 1 March": the day is the first month's.
_MONTH_BEFORE = re.compile(rf"\b(?:{_MONTH})\.?\s+$", re.IGNORECASE)


def _month(written: str) -> int | None:
    """The month's number, or None for "may" and "march" written as the verbs are."""
    lowered = written.lower()
    if lowered in ("may", "march") and not (written.istitle() or written.isupper()):
        return None
    return MONTHS.get(lowered)


def _in_range(text: str, m: re.Match[str]) -> bool:
    """Whether the day ends a range of days ("5th to 7th March"), or is an amount ("USD 5
    March")."""
    day = m.start("day") if m.group("day") else m.start("word")
    return bool(
        _RANGE_BEFORE.search(text[max(0, m.start() - 24) : m.start()])
        or _CODE_BEFORE.search(text[max(0, day - 4) : day])
    )


def _numeric_date(text: str, m: re.Match[str]) -> str:
    if _CODE_BEFORE.search(text[max(0, m.start() - 4) : m.start()]):
        return m.group()
    day = date_key(m.group())
    # "03/05/2026" reads two ways: date_key keeps such a day in its written order.
    return day if day is not None and day[4:5] == "-" else m.group()


def _month_first(text: str, m: re.Match[str]) -> str:
    month = _month(m.group("month"))
    day = None if month is None else iso_day(int(m.group("year")), month, int(m.group("day")))
    return m.group() if day is None else day


def _day_first_parts(m: re.Match[str]) -> tuple[int | None, str]:
    """The day of the month and what stays of the span's start: "the" is the date's only
    when the day is an ordinal ("the 5th of March"), and an ordinal word needs both."""
    ordinal = bool(m.group("suffix") or m.group("word"))
    if m.group("word"):
        if not (m.group("the") and m.group("of")):
            return None, ""
        day = _DAY_ORDINALS["-".join(m.group("word").lower().split()).replace("--", "-")]
    else:
        day = int(m.group("day"))
    keep = "" if ordinal or not m.group("the") else m.group("the") + " "
    return day, keep


def _day_first_with_year(text: str, m: re.Match[str]) -> str:
    day, keep = _day_first_parts(m)
    month = _month(m.group("month"))
    if day is None or month is None or _in_range(text, m):
        return m.group()
    iso = iso_day(int(m.group("year")), month, day)
    return m.group() if iso is None else keep + iso


def _month_day(month: int, day: int) -> str | None:
    # A leap year: "February 29" is a day.
    if not 1 <= day <= calendar.monthrange(2000, month)[1]:
        return None
    return f"{MONTH_NAMES[month - 1].title()} {day}"


def _capitalised(word: str) -> bool:
    return word.istitle() or word.isupper()


def _month_first_ordinal(text: str, m: re.Match[str]) -> str:
    month = _month(m.group("month"))
    if month is None or not _capitalised(m.group("month")):
        return m.group()
    return _month_day(month, int(m.group("day"))) or m.group()


def _day_first_no_year(text: str, m: re.Match[str]) -> str:
    day, keep = _day_first_parts(m)
    month = _month(m.group("month"))
    if (
        day is None
        or month is None
        or not _capitalised(m.group("month"))
        or _in_range(text, m)
        or _MONTH_BEFORE.search(text[max(0, m.start() - 12) : m.start()])
    ):
        return m.group()
    same = _month_day(month, day)
    return m.group() if same is None else keep + same


# --- times of day ---------------------------------------------------------------------------

# An hour with "am" or "pm" ("3 PM", "9:30 a.m.", "11.15pm"). Without them a time stays as
# written: "at 3" may be 3 or 15, "9:30" a time or a duration. "12 AM" is 00:00.
_TIME = re.compile(
    rf"(?<![\w:.,/{_SIGNS}-])(?P<hour>\d{{1,2}})(?:[:.](?P<minute>\d{{2}})"
    r"(?::(?P<second>\d{2}))?)?\s?(?P<half>[ap])(?:\.\s?m\b(?P<dot>\.)?|m\b)",
    re.IGNORECASE,
)
_AFTER_SENTENCE = re.compile(r"\s*(?:$|\n|[A-Z])")
# "1:00 AM am": an hour said twice is left as written.
_TIME_SUFFIX = re.compile(r"\s?[ap](?:\.\s?m\b|m\b)", re.IGNORECASE)
# "3 - 5 pm": 5 pm ends a range whose start has no am or pm of its own.
_DASH_BEFORE = re.compile(r"\d\s*[-\u2013\u2014]\s*$")


def _time(text: str, m: re.Match[str]) -> str:
    before = text[max(0, m.start() - 8) : m.start()]
    if (
        _DASH_BEFORE.search(before)
        or _CODE_BEFORE.search(before)
        or _TIME_SUFFIX.match(text, m.end())
    ):
        return m.group()
    minute = m.group("minute") or "00"
    second = f":{m.group('second')}" if m.group("second") else ""
    key = time_key(f"{m.group('hour')}:{minute}{second} {m.group('half')}m")
    if key is None:
        return m.group()
    # "at 3 p.m. Then …": the dot also ends the sentence.
    end = "." if m.group("dot") and _AFTER_SENTENCE.match(text, m.end()) else ""
    return (key if second else key[:5]) + end


# --- amounts --------------------------------------------------------------------------------

# Names of a currency written after an amount, from ``value_names``, and a bare "dollars";
# not the names that are also words ("40 sterling silver forks", "Rand", "ether").
_NOT_AMOUNTS = frozenset({"sterling", "sterlings", "rand", "rands", "ether", "ethers"})
_AMOUNT_NAMES = {
    **{
        " ".join(name.split()): code
        for name, code in CURRENCY_NAMES.items()
        if name.replace(" ", "").isalpha() and name not in CURRENCY_CODES
        and name not in _NOT_AMOUNTS
    },
    "dollar": "usd", "dollars": "usd", "u.s. dollar": "usd", "u.s. dollars": "usd",
}  # fmt: skip
_NAME_PATTERN = "|".join(
    re.escape(name).replace(r"\ ", r"\s+") for name in sorted(_AMOUNT_NAMES, key=len, reverse=True)
)
_NUMBER = r"\d{1,3}(?:,\d{3}){1,5}(?:\.\d{1,4})?|\d{1,15}(?:\.\d{1,4})?"
_SUFFIX = (
    rf"\s?(?P<after_sign>[$\u20ac\u00a3\u20b9])(?!\s?\d)"
    rf"|\s+(?P<after_code>{_CODE_PATTERN})\b(?!\s?\d)"
    rf"|\s+(?P<name>(?i:{_NAME_PATTERN}))\b"
)
_UNNAMED_SUFFIX = re.sub(r"\(\?P<\w+>", "(?:", _SUFFIX)
_AMOUNT = re.compile(
    rf"(?<![\w{_SIGNS}.,:/+-])"
    rf"(?:(?P<sign>(?i:US)\$|[$\u20ac\u00a3\u20b9])\s?|(?P<code>{_CODE_PATTERN})\s)?"
    rf"(?P<number>{_NUMBER})(?![\d,.:/-]?\d)"
    # A currency before the number, or after it: a plain number is no amount.
    rf"(?(sign)|(?(code)|(?={_UNNAMED_SUFFIX})))(?:{_SUFFIX})?"
)
# "12 $ $", "40 USD dollars": a currency said twice is left as written.
_ANOTHER_SUFFIX = re.compile(_UNNAMED_SUFFIX)
# "$40k", "$5 million", "40 euro cents": another amount than the number says.
_SCALED = re.compile(
    r"[^\W\d_]|\s?(?:k|m|mm|bn|mn|b|million|millions|billion|billions|thousand|thousands"
    r"|trillion|grand|cents?|pence|p)\b",
    re.IGNORECASE,
)


def _amount_number(number: str) -> str:
    whole, _, fraction = number.replace(",", "").partition(".")
    fraction = fraction.rstrip("0")
    whole = whole.lstrip("0") or "0"
    return f"{whole}.{fraction}" if fraction else whole


def _amount(text: str, m: re.Match[str], decimal_comma: bool) -> str:
    written = [
        CURRENCY_SIGNS.get((m.group("sign") or "").lower()),
        (m.group("code") or "").lower() or None,
        CURRENCY_SIGNS.get(m.group("after_sign") or ""),
        (m.group("after_code") or "").lower() or None,
        _AMOUNT_NAMES.get(" ".join((m.group("name") or "").lower().split())),
    ]
    codes = {code for code in written if code}
    number = m.group("number")
    if (
        len(codes) != 1
        or _SCALED.match(text, m.end())
        or _ANOTHER_SUFFIX.match(text, m.end())
        or _DOT_THOUSAND.fullmatch(number)
        or ("," in number and decimal_comma)
    ):
        return m.group()
    return f"{codes.pop().upper()} {_amount_number(number)}"


# --- the rewrite ----------------------------------------------------------------------------

_Rewrite = Callable[[str, re.Match[str]], str]


def _rewrite(text: str, pattern: re.Pattern[str], rewrite: _Rewrite) -> str:
    return pattern.sub(lambda m: rewrite(text, m), text)


# What each pass needs to find anything: most texts state no fact, and skip every pass.
_LETTERS = re.compile(r"[a-z]+")
_DIGIT = re.compile(r"\d")
_COUNT_KEYS = frozenset(_COUNT_WORDS)
_MONTH_KEYS = frozenset(MONTHS)
_HALF_KEYS = frozenset({"am", "pm", "m"})
_AMOUNT_KEYS = frozenset(
    {*(w for name in _AMOUNT_NAMES for w in _LETTERS.findall(name)), *CURRENCY_CODES}
)
_SIGN_CHARS = frozenset("$\u20ac\u00a3\u20b9")


def _normalize(text: str, decimal_comma: bool) -> str:
    words = set(_LETTERS.findall(text.lower()))
    if words & _COUNT_KEYS:
        text = _rewrite(text, _COUNT, _count)
    months = bool(words & _MONTH_KEYS)
    if not _DIGIT.search(text):
        # "the fifth of March" is the only fact written without a digit.
        if not (months and words & _ORDINAL_KEYS):
            return text
        return _rewrite(text, _DAY_FIRST_NO_YEAR_WORDS, _day_first_no_year)
    if "-" in text or "/" in text:
        text = _rewrite(text, _NUMERIC_DATE, _numeric_date)
    if months:
        text = _rewrite(text, _MONTH_FIRST, _month_first)
        ordinals = bool(words & _ORDINAL_KEYS)
        day_first = _DAY_FIRST_WORDS if ordinals else _DAY_FIRST
        text = _rewrite(text, day_first, _day_first_with_year)
        text = _rewrite(text, _MONTH_FIRST_ORDINAL, _month_first_ordinal)
        no_year = _DAY_FIRST_NO_YEAR_WORDS if ordinals else _DAY_FIRST_NO_YEAR
        text = _rewrite(text, no_year, _day_first_no_year)
    if words & _HALF_KEYS:
        text = _rewrite(text, _TIME, _time)
    if words & _AMOUNT_KEYS or not _SIGN_CHARS.isdisjoint(text):
        text = _rewrite(text, _AMOUNT, lambda t, m: _amount(t, m, decimal_comma))
    return text


def normalize_facts(text: str) -> str:
    """``text`` with each date, time of day, amount and count that reads one way only written
    one way: "Meet on March 5, 2026 at 3 PM" is "Meet on 2026-03-05 at 15:00". Idempotent."""
    decimal_comma = "," in text and bool(DECIMAL_COMMA.search(text))
    out: list[str] = []
    position = 0
    for start, end in _protected(text):
        out.append(_normalize(text[position:start], decimal_comma))
        out.append(text[start:end])
        position = end
    out.append(_normalize(text[position:], decimal_comma))
    return "".join(out)
