"""Critical tokens inside free text: numbers, dates, times, units, currencies, negations,
and the addresses a text names (emails, URLs, paths).

Meaning is compared only on free text, and even there a number is never fuzzed:
"meeting at 6 PM" and "meeting at 8 PM" embed almost identically but are different
intents, and so are "approve" and "do not approve". The tokens found here join a call's
exact signature.
"""

from __future__ import annotations

import re

from tooldedup.dedup.english.dates import MONTH_NAMES, MONTHS
from tooldedup.dedup.english.facts import (
    COMPOUND_UNITS,
    CURRENCY_CODES,
    CURRENCY_SIGNS,
    DECIMAL_COMMA,
    NUMBER_WORDS,
    ORDINAL_WORDS,
    TENS,
    normalize_facts,
)
from tooldedup.dedup.english.value_names import CURRENCY_NAMES

__all__ = [
    "DAY_WORDS",
    "MONTH_ABBREV",
    "critical_tokens",
    "fact_tokens",
    "one_unit_or_day",
    "slot_values",
]

# "twenty-first", "twenty first", "thirty-two": one number, written as digits before tokens.
_COMPOUND = re.compile(rf"\b({'|'.join(TENS)})[-\s]+({'|'.join(COMPOUND_UNITS)})\b", re.IGNORECASE)
_WEEKDAYS = frozenset(
    {"monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"}
)
_EVERY = frozenset({"every", "each"})
# Months come from ``dates.py``: every month but "may", which is a verb too.
DAY_WORDS = (
    _WEEKDAYS
    | frozenset({"today", "tomorrow", "yesterday", "tonight", "noon", "midnight"})
    | (frozenset(MONTH_NAMES) - {"may"})
)
# Words that are dates only next to a number ("may" is a verb, "mar" a noun).
MONTH_ABBREV = {
    name: MONTH_NAMES[number - 1]
    for name, number in MONTHS.items()
    if name not in MONTH_NAMES or name == "may"
}
# Currencies named anywhere in a text, with the codes ``facts.py`` writes for them. "¥"
# is yen or yuan, and a token of its own; "pounds" may weigh, but is a token all the same.
_CURRENCY = {
    **{sign: code for sign, code in CURRENCY_SIGNS.items() if len(sign) == 1},
    "¥": "¥", "dollar": CURRENCY_SIGNS["$"], "dollars": CURRENCY_SIGNS["$"],
    "euro": CURRENCY_NAMES["euro"], "euros": CURRENCY_NAMES["euros"],
    "pounds": CURRENCY_SIGNS["£"],
}  # fmt: skip
# Short words right after a number that are units ("5 kg", "20 min", "3 GB"), and any
# three capitals ("500 CHF"). Other words after a number are prose ("Truck 17 has", "the
# Oct 12 food truck festival", "by 11 if"): a list of units stays right where a list of
# non-units never ends.
_FIAT = frozenset(
    """usd eur gbp chf jpy cad aud inr cny rmb sek nok dkk pln czk huf ron bgn isk rub uah krw
    ils thb php idr myr vnd twd hkd sgd nzd aed sar qar kwd egp ngn kes zar brl mxn ars clp cop
    pen""".split()
)
_UNIT_WORDS = _FIAT | frozenset(
    """mg mcg ng g kg t lb lbs oz ml cl dl l gal tsp tbsp mm cm m km ft yd mi mph kph kmh kmph
    ms s sec secs min mins h hr hrs wk wks mo yr yrs kb mb gb tb pb kib mib gib tib kbps mbps
    gbps b k bn mn mil bil mln bln w kw kwh mw mwh gw gwh twh v mv mah hz khz mhz ghz rpm rps
    px pt em rem dpi c f deg cal kcal kj psi kpa bar atm ppm ppb mol mmol ha ac sqm sqft ct kt
    bp bps pp pct pcs pc btc eth ada dot sol usdt usdc xrp doge ltc""".split()
)
# A currency's code in capitals before its amount, as ``facts.py`` writes amounts: "USD
# 40" is "$40" and "40 USD", and never "EUR 40".
_CODES_BEFORE = frozenset(code.upper() for code in _FIAT | CURRENCY_CODES)
# A unit's names, one token for all: "30 min" is "30 minutes" and "30-minute", and never
# "30 hours". Not "pounds" (a weight or a currency) nor "percent" ("30%" has no unit).
_UNIT_NAMES = {
    **{w: "min" for w in ("min", "mins", "minute", "minutes")},
    **{w: "h" for w in ("h", "hr", "hrs", "hour", "hours")},
    # Not "second": "two second-half goals" has no unit.
    **{w: "s" for w in ("s", "sec", "secs", "seconds")},
    **{w: "ms" for w in ("ms", "millisecond", "milliseconds")},
    **{w: "d" for w in ("day", "days")},
    **{w: "wk" for w in ("wk", "wks", "week", "weeks")},
    **{w: "mo" for w in ("mo", "mos", "month", "months")},
    **{w: "yr" for w in ("yr", "yrs", "year", "years")},
    **{w: "kg" for w in ("kg", "kilogram", "kilograms", "kilo", "kilos")},
    **{w: "g" for w in ("g", "gram", "grams")},
    **{w: "mg" for w in ("mg", "milligram", "milligrams")},
    **{w: "lb" for w in ("lb", "lbs")},
    **{w: "oz" for w in ("oz", "ounce", "ounces")},
    **{w: "km" for w in ("km", "kilometer", "kilometers", "kilometre", "kilometres")},
    **{w: "m" for w in ("m", "meter", "meters", "metre", "metres")},
    **{w: "cm" for w in ("cm", "centimeter", "centimeters", "centimetre", "centimetres")},
    **{w: "mm" for w in ("mm", "millimeter", "millimeters", "millimetre", "millimetres")},
    **{w: "mi" for w in ("mi", "mile", "miles")},
    **{w: "ft" for w in ("ft", "foot", "feet")},
    **{w: "l" for w in ("l", "liter", "liters", "litre", "litres")},
    **{w: "ml" for w in ("ml", "milliliter", "milliliters", "millilitre", "millilitres")},
    **{w: "tsp" for w in ("tsp", "teaspoon", "teaspoons")},
    **{w: "tbsp" for w in ("tbsp", "tablespoon", "tablespoons")},
    **{w: "gb" for w in ("gb", "gigabyte", "gigabytes")},
    **{w: "mb" for w in ("mb", "megabyte", "megabytes")},
    **{w: "tb" for w in ("tb", "terabyte", "terabytes")},
    **{w: "pcs" for w in ("pcs", "pc", "piece", "pieces")},
    **{w: "x" for w in ("x", "times")},
}  # fmt: skip
# Short forms of a unit that are no other word: "30 mins" is "30 minutes" even without a
# number before it, so two texts that differ only there say the same (see one_unit_or_day).
_UNIT_ABBREVIATIONS = frozenset(
    "mins hrs secs sec wk wks yr yrs kg lb lbs oz km cm mm ft ml tsp tbsp gb mb pcs".split()
)
# Words that may stand between a number and its unit: "20 more minutes", "3 business days".
_UNIT_FILLERS = frozenset(
    {"more", "extra", "full", "whole", "business", "working", "calendar", "additional"}
)
# Weekdays written short are weekdays before a time ("Sat 7pm", "thurs at 6") or after "on",
# "by", "next", …; those that are no other word also when capitalised inside a sentence
# ("ready Thu, after lunch"), but "Sat", "Sun", "Wed" and "Mon" are words too.
_WEEKDAY_ABBREV = {
    "mon": "monday", "tue": "tuesday", "tues": "tuesday", "wed": "wednesday",
    "thu": "thursday", "thur": "thursday", "thurs": "thursday", "fri": "friday",
    "sat": "saturday", "sun": "sunday",
}  # fmt: skip
_WORDLIKE_DAYS = frozenset({"mon", "wed", "sat", "sun"})
_BEFORE_TIME = frozenset({"at", "after", "before", "by", "from", "around", "until", "till"})
_BEFORE_DAY = frozenset(
    {"on", "by", "until", "till", "next", "this", "every", "before", "after", "from", "through",
     "thru", "til"}
)  # fmt: skip
# Three capitals after a number are a code ("500 CHF", "3 XXL"), unless they spell a word.
_NOT_CODES = frozenset(
    "for the and you not are all can get any but our off out per via new now".split()
)
_ORDINAL_SUFFIX = frozenset({"st", "nd", "rd", "th"})
# A value bound to a named slot: "Ana: 4", "Ben = 2", "Leo 2", "4 for Ana". A swap of values
# between names keeps the bag of numbers; the verifier compares the bindings two texts share.
_SLOT_AFTER = re.compile(r"(?<![\w'-])([A-Z][\w'-]{0,40})\s*[:=]\s*(-?\d[\d.,]*\d|-?\d)\b")
# "Sam 3 slices, Leo 2": a name and its value after a list's separator. A text's first word
# is no name ("Set 3 reminders").
_SLOT_LISTED = re.compile(
    r"(?:[,:;(]|\band|\bor)\s+([A-Z][A-Za-z'-]{0,40})\s+(-?\d[\d.,]*\d|-?\d)\b"
)
# "4 for Ana"; not "to", which ends as many ranges and addresses ("from account 3 to Ana").
_SLOT_BEFORE = re.compile(r"(?<![\w.,])(-?\d[\d.,]{0,40}\d|-?\d)\s+for\s+([A-Z][\w'-]{0,40})")
# "Ana scored 4, Ben got 2": a name, a verb that gives it a value, and the value.
_SLOT_VERB = re.compile(
    r"(?<![\w'-])([A-Z][a-z'-]{1,40})\s+(?:scored|scores|got|gets|owes|owed|paid|pays|won|earned"
    r"|received|receives|needs|takes|took|brings|brought)\s+(?:\$|[A-Z]{3}\s)?"
    r"(-?\d[\d.,]*\d|-?\d)\b"
    # "Ben paid 40 for Ana": the value is Ana's ("4 for Ana" binds it).
    r"(?!\s+for\s+[A-Z])"
)
_ZERO_DECIMALS = re.compile(r"\.0+$")
_DOTTED_AMPM = re.compile(r"\b([ap])\.\s?m\b\.?", re.IGNORECASE)
_TOKEN = re.compile(
    r"(?P<stamp>\d+(?:[:/-]\d+){1,2}|\d+\.\d+\.\d+)"
    r"|(?P<num>(?:(?<![\w.])-)?(?:\d(?:[\d,]*\d)?(?:\.\d+)?|(?<!\d)\.\d+))"
    # "C$", "A$", "NZ$": a dollar, but not the US one; "US$" is.
    r"|(?P<dollar>(?<![^\W\d_])[^\W\d_]{1,3}\$)"
    r"|(?P<word>[^\W\d_]+)"
    r"|(?P<sym>[$€£¥₹])",
    re.IGNORECASE,
)
_THOUSANDS = re.compile(r"-?\d{1,3}(?:,\d{3})+(?:\.\d+)?")
# "1.000" is one in English and a thousand in German; "1,000" is a thousand, unless the
# text writes decimals with a comma ("2,5 kg"). Such a number keeps its written form as its
# token, so it never shares a token with either reading.
_DOT_THOUSAND = re.compile(r"-?\d{1,3}\.\d{3}")
_COMMA_NUMBER = re.compile(r"-?\d+,\d+")


def _compound(match: re.Match[str]) -> str:
    tens = TENS[match.group(1).lower()]
    unit, suffix = COMPOUND_UNITS[match.group(2).lower()]
    return f"{tens + unit}{suffix}"


def _normal_number(text: str, decimal_comma: bool) -> list[str]:
    """Digits as written, without grouping commas, leading zeros or trailing fraction zeros."""
    if _DOT_THOUSAND.fullmatch(text) or (decimal_comma and _COMMA_NUMBER.fullmatch(text)):
        return ["~" + text]
    parts = [text.replace(",", "")] if _THOUSANDS.fullmatch(text) else text.split(",")
    out = []
    for part in parts:
        if not part or part == "-":
            continue
        sign = "-" if part.startswith("-") else ""
        whole, _, fraction = part.lstrip("-").partition(".")
        whole = whole.lstrip("0") or "0"
        fraction = fraction.rstrip("0")
        value = f"{whole}.{fraction}" if fraction else whole
        out.append("0" if value == "0" else sign + value)
    return out


def _stamp(text: str) -> str:
    """A date or time with each numeric part normalised: "2024-03-05" and "2024-3-5" agree.

    Dotted triples keep their digits: "1.000.000" (a million) is not the version "1.0.0".
    """
    if "." in text:
        return text
    if ":" in text and "-" not in text and "/" not in text:
        # A time keeps its hour as written: "09:30" is in the morning, "9:30" may be in the
        # evening or a duration, and is no reading of "9:30 AM" (which facts write "09:30").
        hour, _, rest = text.partition(":")
        return f"{hour}:{_stamp(rest)}"
    return re.sub(r"\d+", lambda m: m.group().lstrip("0") or "0", text)


# Addresses never contain whitespace: each whitespace-separated word is tested on its own,
# which keeps the work linear in the text however a hostile text is built.
_EMAIL_WORD = re.compile(r"[^@<>()\[\],;:\"']+@[^@<>()\[\],;:\"'/]+\.[A-Za-z]{2,}")
# A scheme is short: bounding it keeps a search in a long word from going quadratic.
_URL_WORD = re.compile(r"[a-z][a-z0-9+.-]{0,31}://[^<>\"']+", re.IGNORECASE)
_PATH_WORD = re.compile(r"(?:~|\.{1,2})?/[\w.@%+-]+(?:/[\w.@%+-]*)+")
_WRAPPERS = "\"'()[]{}<>"


def _addresses(text: str) -> list[str]:
    """Emails (without case), URLs and paths (with case) named in a text, as tokens."""
    found = []
    for word in text.split():
        word = word.strip(_WRAPPERS).rstrip(".,;:!?").strip(_WRAPPERS)
        if _EMAIL_WORD.fullmatch(word):
            found.append("@" + word.lower())
        elif "://" in word and (url := _URL_WORD.search(word)) is not None:
            found.append("@" + url.group())
        elif _PATH_WORD.fullmatch(word):
            found.append("@" + word)
    return found


# A command written inside prose is compared as written: in backticks, or from a command
# word that is never an English word to the end of its clause.
_BACKTICKS = re.compile(r"`([^`\n]{1,500})`")
_COMMAND_START = re.compile(
    r"\b(?:kubectl|git|docker|podman|sudo|rm|rmdir|chmod|chown|psql|mysql|sqlite3|mongosh"
    r"|redis-cli|terraform|kubeadm|ansible|aws|gcloud|gsutil|systemctl|journalctl|wget|ssh"
    r"|scp|rsync|npm|npx|pip3|pnpm|pytest|ffmpeg|openssl|iptables|crontab"
    r"|eksctl|heroku|flyctl)\s"
    r"|\b(?:SELECT|UPDATE|DELETE|INSERT|DROP|ALTER|TRUNCATE|GRANT|REVOKE)\s"
)
_CLAUSE_END = re.compile(r"[,;]\s|[.!?](?:\s|$)|\n|`")


# A command word used as a noun: "rm 1507" is a room, "sudo on bastion-02" and "ssh access"
# are rights.
_PROSE_AFTER = re.compile(
    r"\s*(?:\d|(?:on|for|to|into|onto|access|keys?|rights|privileges|permissions?)\b)"
)


def _commands(text: str) -> list[str]:
    found = ["$" + " ".join(m.group(1).split()) for m in _BACKTICKS.finditer(text)]
    position = 0
    while (start := _COMMAND_START.search(text, position)) is not None:
        limit = min(len(text), start.start() + 200)
        end = _CLAUSE_END.search(text, start.end(), limit)
        stop = limit if end is None else end.start()
        position = max(stop, start.end())
        command = text[start.start() : stop]
        if command[:1].islower() and _PROSE_AFTER.match(text, start.end()):
            position = start.end()
            continue
        found.append("$" + " ".join(command.split()))
    return found


# Every word the token loop acts on, in lower case; any other word is passed at once (a
# three-letter word in capitals may be a currency or a unit code, and is read too).
_WATCHED = frozenset(
    [
        *NUMBER_WORDS,
        *ORDINAL_WORDS,
        *DAY_WORDS,
        *(day + "s" for day in _WEEKDAYS),
        *_CURRENCY,
        *_ORDINAL_SUFFIX,
        *MONTH_ABBREV,
        *_WEEKDAY_ABBREV,
        "am",
        "pm",
        *_UNIT_NAMES,
        *(code.lower() for code in _CODES_BEFORE),
        *_UNIT_WORDS,
    ]
)


def critical_tokens(text: str) -> tuple[str, ...]:
    """The sorted bag of numbers, dates, times, units, currencies and addresses in ``text``.

    Negation is not among them: whether "not" changes the act is the verifier's question
    ("isn't clear" and "is unclear" ask the same).
    """
    # A date, a time, an amount or a count written another way is the same token: the
    # tokens are read from the text with its facts in one spelling (``facts.py``).
    return fact_tokens(normalize_facts(text))


def fact_tokens(text: str) -> tuple[str, ...]:
    """``critical_tokens`` of a text whose facts ``normalize_facts`` already wrote one way."""
    addresses = _addresses(text) + _commands(text)
    text = _DOTTED_AMPM.sub(r"\1m", _COMPOUND.sub(_compound, text))
    decimal_comma = "," in text and bool(DECIMAL_COMMA.search(text))
    matches = list(_TOKEN.finditer(text))
    tokens: list[str] = []
    # Paraphrases reorder freely ("Friday at 6" for "at 6 on Friday"), so the tokens form a
    # sorted bag; a date or a time is one token, and "am"/"pm" stays glued to its hour.
    units: list[str] = []
    for i, m in enumerate(matches):
        stamp, num, sym, dollar, raw = m.group("stamp", "num", "sym", "dollar", "word")
        if stamp:
            tokens.append(_stamp(stamp))
        elif num:
            tokens.extend(_normal_number(num, decimal_comma))
        elif sym:
            units.append(_CURRENCY[sym])
        elif dollar:
            sign = dollar.lower()
            units.append(CURRENCY_SIGNS.get(sign, sign))
        else:
            word = raw.lower()
            # Most words of a text are none of these: each is looked up once and passed.
            if word not in _WATCHED and not (len(raw) == 3 and raw.isupper()):
                continue
            previous = matches[i - 1] if i else None
            after = previous is not None and _is_number(previous) and _adjacent(text, previous, m)
            after_stamp = after and previous is not None and bool(previous.group("stamp"))
            previous_word = "" if previous is None else (previous.group("word") or "").lower()
            if word in NUMBER_WORDS:
                tokens.append(NUMBER_WORDS[word])
            elif word in ORDINAL_WORDS:
                tokens.extend((ORDINAL_WORDS[word], "ord"))
            elif word in _WEEKDAYS and previous_word in _EVERY:
                # "every Wednesday" is "on Wednesdays", and neither is "on Wednesday".
                tokens.append(word + "s")
            elif word in DAY_WORDS:
                tokens.append(word)
            elif word[-1:] == "s" and word[:-1] in _WEEKDAYS:
                tokens.append(word)
            elif word in _CURRENCY:
                units.append(_currency(matches, i, word))
            elif after and word in _ORDINAL_SUFFIX:
                tokens.append("ord")
            elif word in MONTH_ABBREV and _next_to_number(matches, i):
                tokens.append(MONTH_ABBREV[word])
            elif word in _WEEKDAY_ABBREV and _is_weekday(text, matches, i):
                tokens.append(_WEEKDAY_ABBREV[word])
            elif after and word in ("am", "pm") and tokens:
                tokens[-1] += word  # bound to its time: "6 am to 8 pm" is not "6 pm to 8 am"
            elif word in _UNIT_NAMES and tokens and _measures(text, matches, i):
                # Bound to its number, as am/pm is: "2 hours and 30 minutes" is not "30 hours
                # and 2 minutes", however the bag is sorted.
                tokens[-1] += _UNIT_NAMES[word]
            elif raw in _CODES_BEFORE and _before_number(text, matches, i):
                units.append(word)
            elif after and not after_stamp and (word in _UNIT_WORDS or _is_code(raw)):
                units.append(word)
    return tuple(sorted([*tokens, *units, *addresses]))


def one_unit_or_day(first: str, second: str) -> bool:
    """Whether one lower-case word is a short form of the other's unit or weekday: "mins"
    and "minutes", "thu" and "thursday". Never a short form that is another word ("min" is a
    minimum, "sat" a verb) nor a plural ("days", "day")."""
    if first in _UNIT_ABBREVIATIONS and second not in _UNIT_ABBREVIATIONS:
        return _UNIT_NAMES.get(first) == _UNIT_NAMES.get(second)
    if second in _UNIT_ABBREVIATIONS and first not in _UNIT_ABBREVIATIONS:
        return _UNIT_NAMES.get(first) == _UNIT_NAMES.get(second)
    days = {first, second}
    return (
        len(days - _WEEKDAY_ABBREV.keys()) == 1
        and not days & _WORDLIKE_DAYS
        and _WEEKDAY_ABBREV.get(first, first) == _WEEKDAY_ABBREV.get(second, second)
    )


def slot_values(text: str) -> dict[str, frozenset[str]]:
    """The values a text binds to capitalised names: "Ana: 4, Ben: 2" gives ana 4, ben 2."""
    bound = [(m.group(1), m.group(2)) for m in _SLOT_AFTER.finditer(text)]
    bound += [(m.group(1), m.group(2)) for m in _SLOT_LISTED.finditer(text)]
    bound += [(m.group(2), m.group(1)) for m in _SLOT_BEFORE.finditer(text)]
    bound += [(m.group(1), m.group(2)) for m in _SLOT_VERB.finditer(text)]
    values: dict[str, set[str]] = {}
    for name, value in bound:
        key = name.lower().removesuffix("'s")
        # "from March 3 to March 10" is a range of dates, not 3 given to someone named March.
        if key not in DAY_WORDS and key not in MONTH_ABBREV:
            # "$1,200.00" and "1200" are one value.
            values.setdefault(key, set()).add(_ZERO_DECIMALS.sub("", value.replace(",", "")))
    return {name: frozenset(found) for name, found in values.items()}


def _currency(matches: list[re.Match[str]], i: int, word: str) -> str:
    """The currency a word names: "Canadian dollars" are not US dollars."""
    before = [(m.group("word") or "").lower() for m in matches[max(0, i - 2) : i]]
    for start in range(len(before)):
        name = " ".join([*before[start:], word])
        if name in CURRENCY_NAMES:
            return CURRENCY_NAMES[name]
    return _CURRENCY[word]


def _before_number(text: str, matches: list[re.Match[str]], i: int) -> bool:
    following = matches[i + 1] if i + 1 < len(matches) else None
    return (
        following is not None and _is_number(following) and _adjacent(text, matches[i], following)
    )


def _is_code(word: str) -> bool:
    return len(word) == 3 and word.isupper() and word.lower() not in _NOT_CODES


def _is_number(m: re.Match[str]) -> bool:
    word = (m.group("word") or "").lower()
    return bool(m.group("num") or m.group("stamp")) or word in NUMBER_WORDS


def _adjacent(text: str, left: re.Match[str], right: re.Match[str]) -> bool:
    return not text[left.end() : right.start()].strip()


def _measures(text: str, matches: list[re.Match[str]], i: int) -> bool:
    """Whether the word at ``i`` is the unit of the number before it: "30 min", "30min", "a
    30-minute call", "20 more minutes"."""
    unit = matches[i]
    number = matches[i - 1] if i else None
    if number is not None and (number.group("word") or "").lower() in _UNIT_FILLERS and i > 1:
        filler, number = number, matches[i - 2]
        if not (_adjacent(text, number, filler) and _adjacent(text, filler, unit)):
            return False
    elif number is None or text[number.end() : unit.start()].strip() not in ("", "-"):
        return False
    following = matches[i + 1] if i + 1 < len(matches) else None
    word = unit.group("word") or ""
    if (
        word[:1].isupper()
        and following is not None
        and _is_number(following)
        and _adjacent(text, unit, following)
    ):
        # "March 28 Year 8 trip": a capitalised unit before its own number is a label.
        return False
    return not number.group("stamp") and _is_number(number)


def _is_weekday(text: str, matches: list[re.Match[str]], i: int) -> bool:
    """A short weekday: after "on", "by", "next", …, or before a time ("Sat 7pm", "thurs at
    6", "Wed after 4 PM"), or an unambiguous one capitalised inside a sentence."""
    raw = matches[i].group("word")
    if i and (matches[i - 1].group("word") or "").lower() in _BEFORE_DAY:
        return True
    following = matches[i + 1 : i + 3]
    if following and _is_number(following[0]):
        return not (raw.isupper() and raw.lower() in _WORDLIKE_DAYS)  # "SAT 1500" is a test
    if len(following) == 2 and _is_number(following[1]):
        link = (following[0].group("word") or "").lower()
        if link in _BEFORE_TIME:
            return True
    if raw.lower() in _WORDLIKE_DAYS or not (raw.istitle() or raw.isupper()):
        return False
    # A capital at a sentence's start says nothing. Only the whitespace before the word is
    # read, so that a text of many such words costs linear time.
    start = matches[i].start() - 1
    while start >= 0 and text[start].isspace():
        start -= 1
    return start >= 0 and text[start] not in ".!?:;\"'([-"


def _next_to_number(matches: list[re.Match[str]], i: int) -> bool:
    neighbours = [matches[j] for j in (i - 1, i + 1) if 0 <= j < len(matches)]
    return any(_is_number(n) for n in neighbours)
