"""Place names read to one form: "Seattle, WA" and "seattle, washington" are one place."""

from __future__ import annotations

import re
from dataclasses import dataclass

from tooldedup.dedup.english.place_names import CITY_ALIASES, COUNTRY_CODES, REGION_NAMES

__all__ = ["Place", "read_place"]

# A word of a place's name: letters, with inner apostrophes or hyphens and a closing dot
# ("St."), or initials ("D.C.", "U.S"). Digits, underscores, slashes, colons, at signs and
# dots inside a word ("logs.prod") make an identifier, a host or a path: no place name.
_WORD = r"(?:[^\W\d_]\.){2,}[^\W\d_]?|[^\W\d_]\.[^\W\d_]|[^\W\d_]+(?:['\u2019-][^\W\d_]+)*\.?"
_PLACE_TEXT = re.compile(rf"(?:{_WORD})(?:(?:,? |,)(?:{_WORD}))*")
_SUFFIXES = (" metropolitan area", " metro area", " area", " region", " metro")
_MAX_CHARS = 200


@dataclass(frozen=True, slots=True)
class Place:
    """A place's name, the regions it lies in, and any other parts named after a comma."""

    name: str
    regions: frozenset[str]
    others: tuple[str, ...]

    def same_as(self, other: Place) -> bool:
        """One place: the same name and parts, and regions given on one side only.

        "Paris" is "Paris, France" and "Paris, TX", which are not each other.
        """
        return (
            self.name == other.name
            and self.others == other.others
            and (self.regions <= other.regions or other.regions <= self.regions)
        )


def _cased(word: str) -> bool:
    # "aBcDeF" is a token, not a name: a place's words are lower, upper or title case.
    letters = word.replace(".", "").replace("'", "").replace("\u2019", "").replace("-", "")
    return letters.islower() or letters.isupper() or letters.istitle()


def _clean(part: str) -> str:
    # Dots after letters say nothing: "D.C." is "DC", "St. Louis" is "St Louis".
    words = part.replace(".", "").casefold().split()
    if words and words[0] == "the":
        words = words[1:]
    return " ".join(words)


def read_place(text: str, region_first: bool, country: bool = False) -> Place | None:
    """The place ``text`` names, or None if it is no place name.

    ``region_first`` reads a bare name as a region before a city ("LA" is Louisiana in a
    state field, Los Angeles in a location field); ``country`` reads a two-letter code as a
    country's ("CA" is Canada in a country field).
    """
    stripped = " ".join(text.split())
    if len(stripped) > _MAX_CHARS or not _PLACE_TEXT.fullmatch(stripped):
        return None
    if not all(_cased(word) for word in stripped.replace(",", " ").split()):
        return None
    head, *rest = (_clean(part) for part in stripped.split(","))
    for suffix in _SUFFIXES:
        if head.endswith(suffix) and len(head) > len(suffix):
            head = head.removesuffix(suffix)
            break
    if not head or not all(rest):
        return None
    named = frozenset(REGION_NAMES[part] for part in rest if part in REGION_NAMES)
    others = tuple(part for part in rest if part not in REGION_NAMES)
    region = COUNTRY_CODES.get(head) if country else None
    region = REGION_NAMES.get(head) if region is None else region
    alias = CITY_ALIASES.get(head)
    if region is not None and (region_first or alias is None):
        # A region by name ("WA", "New York"), or a town named like one in another region
        # ("Indiana, PA", "Washington, DC"), which is not the region.
        if named <= {region}:
            return Place(region, frozenset({region}), others)
        return Place(region, named, others)
    if alias is not None and named <= {alias[1]}:
        # "NYC" is New York in New York, not a New York elsewhere ("Rio, WI" is not Rio).
        city, home = alias
        if REGION_NAMES.get(city) == city:
            return Place(city, frozenset({home}), others)
        return Place(city, named | {home}, others)
    return Place(head, named, others)
