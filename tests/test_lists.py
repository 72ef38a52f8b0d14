"""A set of names in another order: only where the field's name says it holds a set."""

from __future__ import annotations

from random import Random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tooldedup.dedup.english.lists import (
    MAX_PAIRINGS,
    is_set,
    list_lengths,
    list_parent,
    parallel_lists,
    same_items,
)


@pytest.mark.parametrize(
    ("name", "tool", "is_a_set"),
    [
        ("tags", None, True),
        ("ingredients", None, True),
        ("dietary_restrictions", "find_recipes", True),
        ("avoid", "plan_trip", True),
        ("cc", "send_email", True),
        ("recipients", "send_for_signature", False),
        ("colors", "create_gradient", False),
        ("filters", "edit_image", False),
        ("members", "create_oncall_rotation", False),
        ("participants", "create_bracket", False),
        ("attributes", "export_csv", False),
        # Order is part of the value unless the name says it holds a set.
        ("items", "create_order", False),
        ("choices", "submit_ballot", False),
        ("accounts", "transfer", False),
        ("currencies", "convert_money", False),
        ("players", None, False),
        ("languages", "translate", False),
        ("route", None, False),
        ("sort_by", None, False),
        ("keys", "press_keys", False),
        ("tags", "rank_tags", False),
        ("tags", "reorder_tags", False),
        (None, None, False),
    ],
)
def test_is_set(name: str | None, tool: str | None, is_a_set: bool) -> None:
    assert is_set(name, tool) is is_a_set


@pytest.mark.parametrize(
    ("path", "parent"),
    [("items[3]", "items"), ("a.b[0]", "a.b"), ("a[0][1]", None), ("a[0].b", None), ("a", None)],
)
def test_list_parent(path: str, parent: str | None) -> None:
    assert list_parent(path) == parent


def _fold(a: str, b: str) -> bool:
    return a.lower() == b.lower()


def _lower(a: str) -> str:
    return a.lower()


@pytest.mark.parametrize(
    ("mine", "theirs", "same"),
    [
        (["tolls", "highways"], ["highways", "tolls"], True),
        (["a", "a", "b"], ["a", "b", "a"], True),
        (["a", "a", "b"], ["a", "b", "b"], False),
        (["a", "b"], ["a", "b", "b"], False),
        (["Vegan", "paleo"], ["Paleo", "vegan"], True),
        (["Vegan", "paleo"], ["Paleo", "keto"], False),
        # Commands and paths run in the order given.
        (["cd build", "make"], ["make", "cd build"], False),
        (["/tmp/a", "/tmp/b"], ["/tmp/b", "/tmp/a"], False),
        (["line one\nline two", "x"], ["x", "line one\nline two"], False),
        # A command on either side keeps the order, whichever call came first.
        (["git push", "b"], ["b", "git push"], False),
    ],
)
def test_same_items(mine: list[str], theirs: list[str], same: bool) -> None:
    assert same_items(mine, theirs, _fold, _lower) is same
    assert same_items(theirs, mine, _fold, _lower) is same


@given(st.lists(st.sampled_from(["a", "b", "c", "d"]), max_size=8), st.randoms())
def test_any_order_of_plain_names_is_the_same_list(items: list[str], rng: Random) -> None:
    shuffled = list(items)
    rng.shuffle(shuffled)
    assert same_items(items, shuffled, _fold, _lower)


def test_a_long_hostile_list_costs_a_bounded_number_of_pairings() -> None:
    calls = []

    def same(a: str, b: str) -> bool:
        calls.append((a, b))
        return False

    mine = [f"name {i}" for i in range(64)]
    assert not same_items(mine, [m.upper() for m in mine], same, lambda _: "one key")
    assert len(calls) <= MAX_PAIRINGS


@pytest.mark.parametrize(
    ("paths", "paired"),
    [
        (["users[0]", "users[1]", "roles[0]", "roles[1]"], {"users", "roles"}),
        (["users[0]", "roles[0]", "roles[1]"], set()),
        (["a.tags[0]", "a.tags[1]", "b.ids[0]", "b.ids[1]"], set()),
        (['a["x.y"][0]', 'a["x.y"][1]', "a.z[0]", "a.z[1]"], {'a["x.y"]', "a.z"}),
    ],
)
def test_parallel_lists(paths: list[str], paired: set[str]) -> None:
    assert parallel_lists(list_lengths(paths)) == paired
