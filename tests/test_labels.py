"""One name written two ways in an exact field: case, article, legal form, the field's own word."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.helpers import canonicalize
from tooldedup.dedup.english.labels import label_form, same_label
from tooldedup.dedup.policy import ToolPolicy


@pytest.mark.parametrize(
    ("field", "a", "b", "same"),
    [
        ("data_source", "yahoo finance", "Yahoo Finance", True),
        ("species", "Homo sapiens", "homo sapiens", True),
        ("keyword", "the Imjin War", "Imjin War", True),
        ("team", "L.A Lakers", "l.a lakers", True),
        ("team_name", "Golden-State Warriors", "golden state warriors", True),
        ("company_name", "Tesla Inc.", "Tesla", True),
        ("company", "Tesla, Inc.", "Tesla", True),
        ("employer", "Acme Corporation", "Acme Corp", True),
        ("museum_name", "Louvre Museum", "Louvre", True),
        ("theaterName", "Regal", "Regal Theater", True),
        ("airline", "Delta Airlines", "Delta", True),
        ("preferred_airlines", "Delta Airlines", "Delta", True),
        ("treaty_name", "Treaty of Tordesillas", "Tordesillas", True),
        ("function", "lambda x: 4x + 7", "4x + 7", True),
        ("function1", "lambda x : x**2", "x**2", True),
        # One word's case may be the value: "Admin" is not "admin".
        ("company", "Apple", "apple", False),
        ("museum_name", "louvre museum", "Louvre", False),
        # Capitals inside a word, or all capitals, are part of the name.
        ("team", "LA Lakers", "la lakers", False),
        ("brand", "McDonald Farms", "mcdonald farms", False),
        ("company", "Acme 2", "acme 2", False),
        # Only fields that name a thing to look up: elsewhere case and words are data.
        ("value", "total revenue", "Total Revenue", False),
        ("display_name", "mary ann smith", "Mary-Ann Smith", False),
        ("new_name", "Road Trip", "The Road Trip", False),
        ("plaintext", "attack at dawn", "Attack At Dawn", False),
        ("network", "home net", "Home Net", False),
        ("label_name", "To-Do", "To Do", False),
        ("passwords", "correct horse battery", "Correct Horse Battery", False),
        ("pw", "open sesame", "Open Sesame", False),
        ("username", "John Smith", "john smith", False),
        ("department", "IT", "it", False),
        ("trip_type", "round-trip", "round trip", True),
        ("status", "in_progress", "in-progress", True),
        ("status", "in progress", "inprogress", False),
        ("type", "e-mail", "email", False),
        ("type", "Round-Trip", "round trip", False),
        ("view_name", "Sales View", "Sales", False),
        ("gallery", "Wedding Gallery", "Wedding", False),
        ("note", "Hello\n  World", "hello world", False),
        # A legal form is dropped only in a company's name, and two forms are two companies.
        ("company", "Acme Inc", "Acme Ltd", False),
        ("payee", "Acme Inc", "Acme", False),
        ("company", "Acme Co", "Acme", False),
        # Only a museum's or an airline's own word, never a place noun or a qualifier.
        ("city_name", "Mexico City", "Mexico", False),
        ("station_name", "Union Station", "Union", False),
        ("university", "Washington University", "University of Washington", False),
        ("university", "University of Washington", "Washington", False),
        ("museum_name", "Louvre Museum", "Louvre Palace", False),
        ("airline", "Delta Airlines", "United Airlines", False),
        ("species", "Tiger", "Bengal Tiger", False),
        ("company", "Apple", "AAPL", False),
        ("player", "Anna Smith", "Anna Smyth", False),
        ("newspaper", "The Sun", "Sun", False),
        # A lambda header goes only where its one variable is the body's.
        ("function", "lambda x: x + 1", "x + 2", False),
        ("fn", "lambda t: s.upper()", "s.upper()", False),
        ("fn", "lambda s: s.upper()", "lambda t: s.upper()", False),
        ("function", "lambda x: x*y", "lambda y: x*y", False),
        ("function", "lambda a, b: a / b", "lambda b, a: a / b", False),
        ("function", "lambda a, b: a / b", "a / b", False),
        ("code", "lambda x: x + 1", "x + 1", False),
        ("expression", "lambda x: x + 1", "x + 1", False),
        ("museum_name", "Museum", "", False),
        ("company", ", Inc", ",", False),
    ],
)
def test_same_label(field: str, a: str, b: str, same: bool) -> None:
    assert same_label(field, a, b) is same
    assert same_label(field, b, a) is same


@pytest.mark.parametrize(
    ("tool", "same"),
    [
        ("get_stock_price", True),
        ("search_companies", True),
        (None, True),
        # A tool that stores or transforms what it is given keeps every spelling.
        ("create_company", False),
        ("rename_company", False),
        ("update_profile", False),
        ("encrypt_text", False),
    ],
)
def test_a_tool_that_writes_keeps_the_spelling(tool: str | None, same: bool) -> None:
    assert same_label("company", "Acme Widgets", "acme widgets", tool) is same
    assert same_label("company", "Tesla Inc.", "Tesla", tool) is same


def test_a_name_meets_its_other_spelling_in_the_signature() -> None:
    one = canonicalize({"museum_name": "Louvre Museum", "n": 2}, ToolPolicy())
    two = canonicalize({"museum_name": "Louvre", "n": 2}, ToolPolicy())
    assert one.exact_signature == two.exact_signature
    assert one.args_hash != two.args_hash
    assert dict(one.exact_leaves)["museum_name"] == '"Louvre Museum"'
    # A field the policy names as exact is its own key.
    pinned = ToolPolicy(exact_fields=("museum_name",))
    three = canonicalize({"museum_name": "Louvre Museum", "n": 2}, pinned)
    four = canonicalize({"museum_name": "Louvre", "n": 2}, pinned)
    assert three.exact_signature != four.exact_signature


_NAMES = st.sampled_from(
    [
        "Louvre", "Louvre Museum", "louvre museum", "The Louvre", "Tesla", "Tesla Inc.",
        "Tesla, Inc.", "IT", "it", "It", "Treaty of Tordesillas", "Tordesillas", "museum",
        "lambda x: x", "x", "Washington University", "University of Washington", "Washington",
        "the", "The", "Inc", "co", "Co.", "The Louvre Museum", "Louvre , Inc", "lambda x: x",
        "Treaty of Treaty of Tordesillas", "Tordesillas Treaty", "Louvre Museum Museum",
    ]
)  # fmt: skip
_FIELDS = st.sampled_from(["museum_name", "company", "airlines", "treaty", "team", "x", "fn"])


@given(
    field=_FIELDS,
    a=st.one_of(_NAMES, st.text(max_size=30)),
    b=st.one_of(_NAMES, st.text(max_size=30)),
)
def test_the_relation_is_symmetric_and_meets_in_the_signature(field: str, a: str, b: str) -> None:
    assert same_label(field, a, a)
    assert same_label(field, a, b) == same_label(field, b, a)
    if same_label(field, a, b):
        assert label_form(field, a).key == label_form(field, b).key
