"""One name written two ways, in a field that names a thing to look up.

An agent that re-issues a call may write the name of a company, a venue, a team, a species or
a data source of two or more words in other capitals ("yahoo finance" for "Yahoo Finance"), a
hyphen as a space, add or drop a leading "the" ("the Imjin War"), give a company with or
without its legal form ("Tesla Inc." in ``company_name``), a museum or an airline with or
without that word ("Louvre Museum" in ``museum_name``), a function of one variable with or
without its lambda header ("lambda x: 3x + 9"), or join a category's words by a hyphen, an
underscore or a space ("round-trip", "round_trip"). ``same_label`` allows exactly those, and
only in fields named for such things (``ENTITY_FIELDS``, categories) of a tool that does not
write what it is given (not ``create_…``, ``rename_…``, ``set_…``, ``encrypt_…``): there a
name's case is data. Every other field is compared as written, and so is a one-word name's
case ("IT", "Admin").
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from tooldedup.dedup.english.fields import is_category_name, is_code_name, name_words, reads_as_code

__all__ = ["ENTITY_FIELDS", "LabelForm", "label_form", "same_label"]

_MAX_CHARS = 200
_LAMBDA = re.compile(r"lambda\s+([A-Za-z_]\w*)\s*:\s*(?=\S)")
# Words of letters, with the marks names carry inside them: "L.A", "O'Brien", "Coca-Cola".
_NAME = re.compile(r"[^\W\d_]+(?:['\u2019.&-][^\W\d_]+)*\.?")
_CATEGORY = re.compile(r"[a-z]+(?:[-_ ][a-z]+)*")
_SEPARATORS = re.compile(r"[-_ ]")
_HYPHEN = re.compile(r"(?<=[^\W\d_])-(?=[^\W\d_])")
# One legal form, however it is written; two different forms are two companies.
_LEGAL_FORMS = {
    "inc": "inc", "incorporated": "inc", "corp": "corp", "corporation": "corp", "ltd": "ltd",
    "limited": "ltd", "llc": "llc", "plc": "plc", "gmbh": "gmbh",
}  # fmt: skip
_COMPANY_FIELDS = frozenset(
    {"company", "firm", "employer", "organization", "organisation", "brand", "manufacturer",
     "maker", "publisher", "business", "corporation", "enterprise"}
)  # fmt: skip
# A word a field's value may repeat or leave out: "Louvre Museum" is the Louvre in a museum
# field. Never a place noun: "Mexico City" is not "Mexico", "Union Station" is not "Union".
_HEAD_NOUNS = frozenset(
    {"museum", "theater", "theatre", "cinema", "airline", "treaty", "hotel", "restaurant"}
)  # fmt: skip
_GENERIC = frozenset({"name", "names", "id", "title", "label", "value", "text", "full"})
# Heads of field names that name a thing to look up, whose spelling is not the value.
ENTITY_FIELDS: frozenset[str] = _COMPANY_FIELDS | _HEAD_NOUNS | frozenset(
    {
        "carrier", "venue", "team", "club", "league", "species", "source", "provider",
        "platform", "store", "shop", "event", "keyword", "topic", "genre", "cuisine", "artist",
        "band", "author", "player", "celebrity", "landmark", "attraction", "school",
        "university", "college", "hospital", "movie", "film", "show", "book", "song", "album",
        "game", "sport", "exchange", "war", "battle", "discovery", "person", "entity",
        "director", "actor", "composer", "painter", "scientist", "organism", "animal", "plant",
        "disease", "drug", "instrument",
    }
)  # fmt: skip
_FUNCTION_FIELDS = frozenset({"function", "func", "fn", "equation", "integrand"})
_HEADS = ENTITY_FIELDS | _FUNCTION_FIELDS
# Verbs of a tool that stores or transforms what it is given: there "Total Revenue" is not
# "total revenue", however it names a thing.
_WRITE_VERBS = frozenset(
    {
        "create", "add", "set", "update", "rename", "edit", "write", "register", "insert",
        "save", "store", "put", "patch", "encrypt", "decrypt", "hash", "encode", "decode",
        "format", "label", "tag", "title", "name", "translate", "post", "publish", "define",
        "modify", "change", "replace", "upsert", "new", "append", "sign", "generate",
    }
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class LabelForm:
    """A value as the comparison reads it: its body (a lambda header taken off) and, for a
    name, its words; ``key`` is what every spelling of it shares."""

    body: str
    variable: str | None
    words: tuple[str, ...] | None
    key: str


def _singular(word: str) -> str:
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


def _head(name: str | None) -> str | None:
    """The noun a field's name ends in, past generic words: ``museum`` for ``museum_name``."""
    words = [w.rstrip("0123456789") for w in name_words(name)] if name else []
    words = [w for w in words if w and w not in _GENERIC]
    if not words:
        return None
    # "species" is no plural; "airlines" and "companies" are.
    return words[-1] if words[-1] in _HEADS else _singular(words[-1])


def _body(name: str | None, text: str) -> tuple[str, str | None]:
    """A function without its lambda header, where x is its one variable and is used."""
    match = _LAMBDA.match(text)
    if match is None or _head(name) not in _FUNCTION_FIELDS:
        return text, None
    body = text[match.end() :]
    used = re.search(rf"(?<![A-Za-z_]){re.escape(match[1])}(?![A-Za-z_0-9])", body)
    return (body, match[1]) if used else (text, None)


def _fold(word: str) -> str:
    # "Finance" and "finance" are one word; "IT", "McDonald" and "JSmith" keep their case.
    return word.lower() if word.istitle() else word


def _normal(words: tuple[str, ...], fold: bool) -> tuple[str, ...]:
    out = [_fold(w) for w in words] if fold else list(words)
    if len(out) > 2 and out[0].lower() == "the":
        out = out[1:]
    if out and out[-1].lower().rstrip(".") in _LEGAL_FORMS:
        out[-1] = _LEGAL_FORMS[out[-1].lower().rstrip(".")]
    while out and out[-1] == ",":
        out.pop()
    return tuple(out)


def _drop(words: tuple[str, ...], head: str | None) -> tuple[str, ...]:
    """Drop a company's legal form in a company field, or the word the field is named for."""
    if len(words) < 2 or head is None:
        return words
    last = words[-1].lower()
    rest = words
    if head in _COMPANY_FIELDS and last in _LEGAL_FORMS.values():
        rest = words[:-2] if words[-2] == "," else words[:-1]
    elif head in _HEAD_NOUNS and _singular(last) == head:
        rest = words[:-1]
    elif head == "treaty" and len(words) > 2 and words[0].lower() == head and words[1] == "of":
        rest = words[2:]
    return rest if _count(rest) else words


def _drop_all(words: tuple[str, ...], head: str | None) -> tuple[str, ...]:
    while (shorter := _drop(words, head)) != words:
        words = shorter
    return words


@lru_cache(maxsize=4096)
def label_form(name: str | None, text: str) -> LabelForm:
    """How ``text`` reads in a field called ``name``; the exact signature holds its ``key``."""
    head = _head(name)
    if len(text) > _MAX_CHARS or "\n" in text or head is None:
        return LabelForm(text, None, None, text)
    if is_category_name(name) and _CATEGORY.fullmatch(text):
        # "round-trip", "round_trip" and "round trip" are one category.
        return LabelForm(text, None, None, _SEPARATORS.sub(" ", text))
    if head in _FUNCTION_FIELDS and not is_code_name(name):
        body, variable = _body(name, text)
        return LabelForm(body, variable, None, body)
    if head not in ENTITY_FIELDS or reads_as_code(text):
        return LabelForm(text, None, None, text)
    words: list[str] = []
    for raw in text.replace(",", " ,").split():
        if raw != "," and not _NAME.fullmatch(raw):
            return LabelForm(text, None, None, text)
        words.extend(_HYPHEN.split(raw))
    # The key reads every word without case and drops what may be dropped, so that any two
    # spellings ``same_label`` accepts meet in the signature.
    key = _drop_all(_normal(tuple(words), fold=True), head)
    return LabelForm(text, None, tuple(words), " ".join(key).replace(" ,", ","))


def same_label(name: str | None, a: str, b: str, tool: str | None = None) -> bool:
    """Whether ``a`` and ``b`` are one name in a field called ``name`` of tool ``tool``,
    written two ways."""
    if a == b:
        return True
    if tool is not None and not _WRITE_VERBS.isdisjoint(name_words(tool)):
        return False
    one, two = label_form(name, a), label_form(name, b)
    if is_category_name(name) and _CATEGORY.fullmatch(a) and _CATEGORY.fullmatch(b):
        return one.key == two.key
    if one.body == two.body:
        # "lambda x: x*y" and "lambda y: x*y" are two functions.
        return one.variable is None or two.variable is None or one.variable == two.variable
    if one.words is None or two.words is None:
        return False
    # Case says nothing in a name of two words or more; in one word it may be the value.
    fold = min(_count(one.words), _count(two.words)) >= 2
    mine, theirs = _normal(one.words, fold), _normal(two.words, fold)
    if mine == theirs:
        return True
    head = _head(name)
    return _drop(mine, head) == theirs or mine == _drop(theirs, head)


def _count(words: tuple[str, ...]) -> int:
    return sum(1 for w in words if w != ",")
