"""Which leaves of two calls hold one value written two ways, or a set in another order.

The exact signature lets two such calls meet as candidates (``dedup/canonical.py``); this is
the pairwise test: a place, date, time, unit or currency by its kind (``values.py``),
a name by its field (``labels.py``), and a set of names in any order
(``lists.py``). Every comparison spends from a budget, so a hostile call of many long
values, checked against many candidates, costs a bounded amount of work.
"""

from __future__ import annotations

import json
from collections.abc import Container, Sequence
from functools import partial

from tooldedup.dedup.english.labels import label_form, same_label
from tooldedup.dedup.english.lists import (
    is_set,
    list_lengths,
    list_parent,
    parallel_lists,
    same_items,
)
from tooldedup.dedup.english.values import same_value, value_key, value_kind
from tooldedup.dedup.paths import leaf_name, pinned
from tooldedup.dedup.protocols import SpellingBudget

__all__ = ["equivalent_leaves", "spelt_alike"]

# Sets in another order compared in one pair of calls: each costs a pass over the leaves.
_MAX_SETS = 16


def equivalent_leaves(
    mine: Sequence[tuple[str, str]],
    theirs: Sequence[tuple[str, str]],
    exact_fields: Sequence[str] = (),
    tool: str | None = None,
    budget: SpellingBudget | None = None,
) -> tuple[str, ...] | None:
    """The paths whose values differ in spelling (or a set's order) only, or None if any
    value differs.

    Leaves are (path, JSON value) pairs, as the canonical form lists them. An empty tuple
    means every value is equal as written. Each pair of values compared for spelling spends
    one unit of ``budget``; when it runs out, the values differ.
    """
    budget = SpellingBudget() if budget is None else budget
    if tuple(mine) == tuple(theirs):
        return ()
    other = dict(theirs)
    if len(other) != len(mine):
        return None
    differ: list[str] = []
    reordered: dict[str, str | None] = {}
    for path, value in mine:
        their = other.get(path)
        if their is None:
            return None
        if their == value:
            continue
        if pinned(path, exact_fields):
            return None
        a, b = json.loads(value), json.loads(their)
        if not isinstance(a, str) or not isinstance(b, str):
            return None
        name = leaf_name(path)
        differ.append(path)
        if not budget.spend():
            return None
        if _same(name, tool, a, b):
            continue
        parent = list_parent(path)
        if parent is None:
            return None
        if parent not in reordered:
            if len(reordered) >= _MAX_SETS or not is_set(name, tool):
                return None
            reordered[parent] = name
    if reordered:
        if not parallel_lists(list_lengths(path for path, _ in mine)).isdisjoint(reordered):
            return None
        lists = _lists(mine, reordered), _lists(theirs, reordered)
        for parent, name in reordered.items():
            same = partial(_spend_and_compare, budget, name, tool)
            if not same_items(lists[0][parent], lists[1][parent], same, partial(_key, name)):
                return None
    return tuple(differ)


def _spend_and_compare(
    budget: SpellingBudget, name: str | None, tool: str | None, a: str, b: str
) -> bool:
    return budget.spend() and _same(name, tool, a, b)


def _same(name: str | None, tool: str | None, a: str, b: str) -> bool:
    kind = value_kind(name)
    return same_label(name, a, b, tool) if kind is None else same_value(kind, a, b)


def _key(name: str | None, text: str) -> str:
    kind = value_kind(name)
    return label_form(name, text).key if kind is None else value_key(kind, text)


def _lists(leaves: Sequence[tuple[str, str]], parents: Container[str]) -> dict[str, list[str]]:
    """The items of these lists, in one pass; a number or null there is kept as JSON."""
    items: dict[str, list[str]] = {}
    for path, value in leaves:
        parent = list_parent(path)
        if parent is not None and parent in parents:
            item = json.loads(value)
            items.setdefault(parent, []).append(item if isinstance(item, str) else value)
    return items


def spelt_alike(
    mine: Sequence[tuple[str, str]],
    theirs: Sequence[tuple[str, str]],
    exact_fields: Sequence[str] = (),
    tool: str | None = None,
    budget: SpellingBudget | None = None,
) -> frozenset[str]:
    """The paths of leaves whose values differ in spelling or list order only, whatever
    the other leaves hold: what ``explain`` leaves out of the differing fields."""
    budget = SpellingBudget() if budget is None else budget
    other = dict(theirs)
    alike: set[str] = set()
    for path, value in mine:
        if budget.remaining <= 0:
            break
        their = other.get(path)
        if their is not None and their != value:
            alike.update(
                equivalent_leaves(((path, value),), ((path, their),), exact_fields, tool, budget)
                or ()
            )
    one, two = _set_leaves(mine, tool), _set_leaves(theirs, tool)
    paired = parallel_lists(list_lengths(path for path, _ in mine))
    for parent in [p for p in one if p not in paired][:_MAX_SETS]:
        found = equivalent_leaves(one[parent], two.get(parent, []), exact_fields, tool, budget)
        alike.update(found or ())
    return frozenset(alike)


def _set_leaves(
    leaves: Sequence[tuple[str, str]], tool: str | None
) -> dict[str, list[tuple[str, str]]]:
    groups: dict[str, list[tuple[str, str]]] = {}
    sets: dict[str, bool] = {}
    for leaf in leaves:
        parent = list_parent(leaf[0])
        if parent is None:
            continue
        if parent not in sets:
            sets[parent] = is_set(leaf_name(parent), tool)
        if sets[parent]:
            groups.setdefault(parent, []).append(leaf)
    return groups
