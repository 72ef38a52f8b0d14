"""Which leaves of two calls hold one value written two ways, or a set in another order."""

from __future__ import annotations

import pytest

from tests.helpers import canonicalize
from tooldedup.dedup.english.equivalence import SpellingBudget, equivalent_leaves, spelt_alike
from tooldedup.dedup.policy import ToolPolicy


@pytest.mark.parametrize(
    ("a", "b", "policy", "paths"),
    [
        ({"city": "Seattle", "n": 2}, {"city": "Seattle, WA", "n": 2}, ToolPolicy(), ("city",)),
        (
            {"trip": [{"city": "NYC"}]},
            {"trip": [{"city": "New York"}]},
            ToolPolicy(),
            ("trip[0].city",),
        ),
        ({"city": "Seattle", "n": 2}, {"city": "Seattle", "n": 3}, ToolPolicy(), None),
        ({"city": "Seattle"}, {"city": "Seattle"}, ToolPolicy(), ()),
        ({"order_id": "A-1"}, {"order_id": "a-1"}, ToolPolicy(), None),
        ({"city": "Seattle"}, {"city": "Seattle, WA"}, ToolPolicy(exact_fields=("city",)), None),
        (
            {"address": {"city": "Seattle"}},
            {"address": {"city": "Seattle, WA"}},
            ToolPolicy(exact_fields=("address",)),
            None,
        ),
        ({"unit": "Mg"}, {"unit": "mg"}, ToolPolicy(), None),
        ({"unit": "KG"}, {"unit": "kg"}, ToolPolicy(), ("unit",)),
        (
            {"museum_name": "Louvre"},
            {"museum_name": "Louvre Museum"},
            ToolPolicy(),
            ("museum_name",),
        ),
        ({"dept": "IT"}, {"dept": "it"}, ToolPolicy(), None),
        (
            {"avoid": ["tolls", "highways"], "n": 1},
            {"avoid": ["highways", "tolls"], "n": 1},
            ToolPolicy(),
            ("avoid[0]", "avoid[1]"),
        ),
        (
            {"allergies": ["Tree Nuts", "egg"]},
            {"allergies": ["egg", "Tree Nuts"]},
            ToolPolicy(),
            ("allergies[0]", "allergies[1]"),
        ),
        ({"tags": ["vegan", "keto"]}, {"tags": ["keto", "paleo"]}, ToolPolicy(), None),
        ({"avoid": ["tolls"]}, {"avoid": ["tolls", "tolls"]}, ToolPolicy(), None),
        ({"point": [1, 2]}, {"point": [2, 1]}, ToolPolicy(), None),
        ({"mixed": ["a", 1]}, {"mixed": [1, "a"]}, ToolPolicy(), None),
        ({"route": ["Boston", "NYC"]}, {"route": ["NYC", "Boston"]}, ToolPolicy(), None),
        ({"sort_by": ["name", "age"]}, {"sort_by": ["age", "name"]}, ToolPolicy(), None),
        ({"tasks": ["cd build", "make"]}, {"tasks": ["make", "cd build"]}, ToolPolicy(), None),
        ({"filters": ["cd build", "make"]}, {"filters": ["make", "cd build"]}, ToolPolicy(), None),
        ({"choices": ["Alice", "Bob"]}, {"choices": ["Bob", "Alice"]}, ToolPolicy(), None),
        (
            {"users": ["ann", "bob"], "roles": ["admin", "viewer"]},
            {"users": ["ann", "bob"], "roles": ["viewer", "admin"]},
            ToolPolicy(),
            None,
        ),
        (
            {"users": ["ann"], "roles": ["admin", "viewer"]},
            {"users": ["ann"], "roles": ["viewer", "admin"]},
            ToolPolicy(),
            ("roles[0]", "roles[1]"),
        ),
        (
            {"allergies": ["Tree Nuts", "egg"]},
            {"allergies": ["egg", "tree nuts"]},
            ToolPolicy(),
            None,
        ),
        ({"tags": [["a", "b"]]}, {"tags": [["b", "a"]]}, ToolPolicy(), None),
        (
            {"avoid": ["tolls", "highways"]},
            {"avoid": ["highways", "tolls"]},
            ToolPolicy(exact_fields=("avoid",)),
            None,
        ),
        (
            {"trip": [{"city": "NYC"}, {"city": "Boston"}]},
            {"trip": [{"city": "Boston"}, {"city": "NYC"}]},
            ToolPolicy(),
            None,
        ),
    ],
)
def test_equivalent_leaves(
    a: dict[str, object],
    b: dict[str, object],
    policy: ToolPolicy,
    paths: tuple[str, ...] | None,
) -> None:
    mine, theirs = canonicalize(a, policy), canonicalize(b, policy)
    found = equivalent_leaves(mine.exact_leaves, theirs.exact_leaves, policy.exact_fields)
    assert found == paths
    if paths is not None:
        assert mine.exact_signature == theirs.exact_signature


@pytest.mark.parametrize(
    ("tool", "paths"),
    [
        ("plan_trip", ("stops_to_avoid[0]", "stops_to_avoid[1]")),
        ("rank_candidates", None),
        ("reorder_list", None),
    ],
)
def test_a_tool_about_order_keeps_its_lists_in_order(
    tool: str, paths: tuple[str, ...] | None
) -> None:
    policy = ToolPolicy()
    mine = canonicalize({"stops_to_avoid": ["a", "b"]}, policy)
    theirs = canonicalize({"stops_to_avoid": ["b", "a"]}, policy)
    found = equivalent_leaves(mine.exact_leaves, theirs.exact_leaves, (), tool)
    assert found == paths


def test_the_budget_bounds_the_work_of_one_check() -> None:
    policy = ToolPolicy()
    names = [f"Acme Widgets {chr(97 + i)}" for i in range(20)]
    mine = canonicalize({f"company_{i}": n for i, n in enumerate(names)}, policy)
    theirs = canonicalize({f"company_{i}": n.lower() for i, n in enumerate(names)}, policy)
    assert equivalent_leaves(mine.exact_leaves, theirs.exact_leaves) is not None
    budget = SpellingBudget(remaining=10)
    assert equivalent_leaves(mine.exact_leaves, theirs.exact_leaves, budget=budget) is None
    assert budget.remaining < 0


def test_spelt_alike_names_what_differs_only_in_spelling() -> None:
    policy = ToolPolicy()
    pairs = {"users": ["x", "y"], "roles": ["p", "q"]}
    mine = canonicalize({"city": "Seattle", "n": 2, "tags": ["a", "b", "c"], **pairs}, policy)
    swapped = {"users": ["x", "y"], "roles": ["q", "p"]}
    theirs = canonicalize(
        {"city": "Seattle, WA", "n": 3, "tags": ["c", "b", "a"], **swapped}, policy
    )
    # Roles beside users of the same length pair up by place: their order is no spelling.
    assert spelt_alike(mine.exact_leaves, theirs.exact_leaves) == {"city", "tags[0]", "tags[2]"}
