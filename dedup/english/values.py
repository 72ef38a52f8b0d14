"""One value spelt two ways: places, dates, times, units and currencies in exact fields.

Exact fields are compared for equality, but an agent that re-issues a call may write the same
value another way: "Seattle, WA" for "Seattle", "01/13/2020" for "2020-01-13", "pounds" for
"lb", "Euros" for "EUR". By the field's name, such a value gets a *key*, which the exact
signature holds so that the two calls meet as candidates, and a pairwise test of whether
the two spellings are one value (``places.py``, ``dates.py``). Any other value's
key is the value itself. A field the policy lists in ``exact_fields``, or a field inside
one, is compared as written.
"""

from __future__ import annotations

from tooldedup.dedup.english.dates import date_key, time_key
from tooldedup.dedup.english.fields import name_words
from tooldedup.dedup.english.places import Place, read_place
from tooldedup.dedup.english.value_names import CURRENCY_NAMES, UNIT_NAMES
from tooldedup.dedup.records import ValueKind

__all__ = [
    "same_value",
    "value_key",
    "value_kind",
]


_PLACE_WORDS = frozenset(
    {"location", "city", "destination", "origin", "place", "town", "hometown", "locality"}
)
_REGION_WORDS = frozenset({"state", "province", "region"})
_DATE_WORDS = frozenset({"date", "dob", "birthday", "birthdate", "deadline"})
# "lap_time" and "cook_time" are durations: "4:30" there is no time of day.
_DURATION_WORDS = frozenset(
    {
        "lap", "run", "running", "cook", "cooking", "prep", "bake", "wait", "waiting",
        "duration", "elapsed", "response", "travel", "total", "play", "playing", "watch",
        "screen", "up", "down", "idle", "processing", "execution", "exec", "cpu", "compute",
        "rest", "hold", "delay", "timeout", "lead", "turnaround", "cycle", "race", "finish",
        "split", "best", "average", "avg", "max", "min", "mean",
    }
)  # fmt: skip
_MAX_CHARS = 200


def value_kind(name: str | None) -> ValueKind | None:
    """The kind of value a field of this name holds, if it is one written more than one way."""
    if name is None:
        return None
    # "city_2" and "place1" are numbered fields of one kind.
    words = [w.rstrip("0123456789") for w in name_words(name)]
    words = [w for w in words if w]
    last = words[-1] if words else ""
    if last in _PLACE_WORDS:
        return ValueKind.PLACE
    if last in _REGION_WORDS:
        return ValueKind.REGION
    if last in ("country", "countries"):
        return ValueKind.COUNTRY
    if last in _DATE_WORDS or "date" in words:
        return ValueKind.DATE
    if last == "time" and not _DURATION_WORDS.intersection(words):
        return ValueKind.TIME
    if last in ("unit", "units"):
        return ValueKind.UNIT
    if last in ("currency", "currencies"):
        return ValueKind.CURRENCY
    return None


def _symbol(text: str, names: dict[str, str]) -> str:
    name = " ".join(text.split()).rstrip(".")
    # "KG" is "kg", but "Mg" (megagram) is not "mg", and "mS" is not "ms": a short symbol
    # in mixed case is looked up as written.
    if len(name) > 3 or name.islower() or name.isupper():
        name = name.casefold().replace("sq.", "sq")
    return names.get(name, text)


def value_key(kind: ValueKind, text: str) -> str:
    """What two spellings of one value share: the exact signature holds it."""
    if len(text) > _MAX_CHARS:
        return text
    if kind is ValueKind.DATE:
        return date_key(text) or text
    if kind is ValueKind.TIME:
        return time_key(text) or date_key(text) or text
    if kind is ValueKind.UNIT:
        return _symbol(text, UNIT_NAMES)
    if kind is ValueKind.CURRENCY:
        return _symbol(text, CURRENCY_NAMES)
    place = _read(kind, text)
    return text if place is None else place.name


def same_value(kind: ValueKind, a: str, b: str) -> bool:
    """Whether ``a`` and ``b`` are one value of this kind, spelt two ways."""
    if a == b:
        return True
    if max(len(a), len(b)) > _MAX_CHARS or value_key(kind, a) != value_key(kind, b):
        return False
    if kind in (ValueKind.PLACE, ValueKind.REGION, ValueKind.COUNTRY):
        one, two = _read(kind, a), _read(kind, b)
        return one is not None and two is not None and one.same_as(two)
    return True


def _read(kind: ValueKind, text: str) -> Place | None:
    region = kind is not ValueKind.PLACE
    return read_place(text, region_first=region, country=kind is ValueKind.COUNTRY)
