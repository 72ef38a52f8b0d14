"""A set of names given in another order: ``["tolls", "highways"]`` for ``["highways", "tolls"]``.

Order is part of a list's value unless the policy names the field in ``unordered_fields``, or
the field's name says it holds a set (``SET_FIELD_WORDS``: tags, keywords, allergies,
amenities, cc, attendees, …). Even then the list must be a field's own list of plain strings
(not a list inside a list, nor commands or paths), with no list of the same length beside it
(``users`` and ``roles`` pair up by position), and the tool's name must not be about order
(``rank_tags``, ``create_gradient``). Only the pairwise test and the exact signature read such a
list as a set: the canonical form, its hash and the stored call keep the order sent.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence

from tooldedup.dedup.english.fields import name_words, reads_as_code

__all__ = [
    "MAX_PAIRINGS",
    "ORDERING_TOOL_WORDS",
    "SET_FIELD_WORDS",
    "is_set",
    "list_lengths",
    "list_parent",
    "parallel_lists",
    "same_items",
]

# Last words of a field's name that say its list is a set, whatever its order.
SET_FIELD_WORDS: frozenset[str] = frozenset(
    {
        "tags", "labels", "keywords", "topics", "interests", "hobbies", "categories",
        "ingredients", "amenities", "facilities", "cuisines", "genres", "allergies",
        "allergens", "restrictions", "toppings", "extras", "addons", "cc", "bcc", "attendees",
        "invitees", "avoid", "exclude", "excludes", "excluded", "include", "includes",
        "permissions", "scopes", "roles", "skills", "symptoms",
    }
)  # fmt: skip
# Words of a tool's name that say it is about order: "reorder_tasks", "rank_candidates".
ORDERING_TOOL_WORDS: frozenset[str] = frozenset(
    {
        "reorder", "rank", "sort", "prioritize", "prioritise", "sequence", "arrange", "swap",
        "route", "schedule", "queue", "playlist", "shuffle", "permute", "gradient", "palette",
        "rotation", "rotate", "bracket", "seed", "pipeline", "chain", "sign", "signature",
        "stack", "layer", "layers", "compose", "concat", "concatenate",
    }
)  # fmt: skip
_ITEM = re.compile(r"^(.*[^\]])\[\d+\]$")
_MAX_ITEMS = 64
MAX_PAIRINGS = 256


def list_parent(path: str) -> str | None:
    """The path of the field a leaf is a direct list item of: ``a.b`` for ``a.b[3]``, and
    None for an item of a list inside a list (``a[0][1]``)."""
    match = _ITEM.match(path)
    return None if match is None else match[1]


_INDEX = re.compile(r"\[(\d+)\]")
_QUOTED_KEY = re.compile(r'^(.*)\["(?:[^"\\]|\\.)*"\]$')
_PLAIN_KEY = re.compile(r"^(.*)\.[A-Za-z0-9_$@:-]+$")


def list_lengths(paths: Iterable[str]) -> dict[str, int]:
    """The length of every list the leaves lie in, by the list's path."""
    lengths: dict[str, int] = {}
    for path in paths:
        for match in _INDEX.finditer(path):
            prefix = path[: match.start()]
            lengths[prefix] = max(lengths.get(prefix, 0), int(match[1]) + 1)
    return lengths


def _container(path: str) -> str:
    match = _QUOTED_KEY.match(path) or _PLAIN_KEY.match(path)
    return "" if match is None else match[1]


def parallel_lists(lengths: dict[str, int]) -> frozenset[str]:
    """The lists with another list of the same length beside them: items paired by place."""
    beside: Counter[tuple[str, int]] = Counter(
        (_container(path), length) for path, length in lengths.items()
    )
    return frozenset(
        path for path, length in lengths.items() if beside[_container(path), length] > 1
    )


def is_set(name: str | None, tool: str | None = None) -> bool:
    """Whether a list in a field called ``name`` of tool ``tool`` holds a set."""
    if name is None:
        return False
    words = name_words(name)
    if not words or words[-1] not in SET_FIELD_WORDS:
        return False
    return tool is None or ORDERING_TOOL_WORDS.isdisjoint(name_words(tool))


def _plain(item: str) -> bool:
    # Commands and paths run in the order given: "cd build" before "make".
    return "\n" not in item and "/" not in item and "\\" not in item and not reads_as_code(item)


def _pairs_up(
    mine: Sequence[str], theirs: Sequence[str], same: Callable[[str, str], bool], budget: list[int]
) -> bool:
    left = list(theirs)
    for item in mine:
        index = next((i for i, other in enumerate(left) if other == item), None)
        for i, other in enumerate(left):
            if index is not None:
                break
            budget[0] -= 1
            if budget[0] < 0:
                return False
            if same(item, other):
                index = i
        if index is None:
            return False
        del left[index]
    return True


def same_items(
    mine: Sequence[str],
    theirs: Sequence[str],
    same: Callable[[str, str], bool],
    key: Callable[[str], str],
) -> bool:
    """Whether two lists of plain strings hold the same items in any order, each item of one
    paired with one item of the other, equal or ``same`` (one value spelt two ways).

    ``key`` is what ``same`` items share: items are paired only within one key, and at most
    ``MAX_PAIRINGS`` pairs are tried, so a long hostile list costs little.
    """
    if len(mine) != len(theirs) or len(mine) > _MAX_ITEMS:
        return False
    if not all(map(_plain, [*mine, *theirs])):
        return False
    if Counter(mine) == Counter(theirs):
        return True
    groups: dict[str, tuple[list[str], list[str]]] = {}
    for side, items in enumerate((mine, theirs)):
        for item in items:
            groups.setdefault(key(item), ([], []))[side].append(item)
    budget = [MAX_PAIRINGS]
    # Paired greedily both ways, so that the answer is the same whichever call came first.
    return all(
        len(one) == len(two)
        and _pairs_up(one, two, same, budget)
        and _pairs_up(two, one, same, budget)
        for one, two in groups.values()
    )
