"""One value spelt two ways: places, dates, times, units and currencies in exact fields."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.helpers import canonicalize
from tooldedup.dedup.english.dates import date_key, time_key
from tooldedup.dedup.english.values import same_value, value_key, value_kind
from tooldedup.dedup.paths import leaf_name
from tooldedup.dedup.policy import ToolPolicy
from tooldedup.dedup.records import ValueKind


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("location", ValueKind.PLACE),
        ("end_location", ValueKind.PLACE),
        ("fromCity", ValueKind.PLACE),
        ("city_2", ValueKind.PLACE),
        ("place1", ValueKind.PLACE),
        ("state", ValueKind.REGION),
        ("country", ValueKind.COUNTRY),
        ("destination_countries", ValueKind.COUNTRY),
        ("start_date", ValueKind.DATE),
        ("date_of_birth", ValueKind.DATE),
        ("deadline", ValueKind.DATE),
        ("departureTime", ValueKind.TIME),
        ("lap_time", None),
        ("cookTime", None),
        ("to_unit", ValueKind.UNIT),
        ("base_currency", ValueKind.CURRENCY),
        ("update_mode", None),
        ("candidate", None),
        ("order_id", None),
        ("amount", None),
        ("to", None),
        (None, None),
    ],
)
def test_kind_by_field_name(name: str | None, kind: ValueKind | None) -> None:
    assert value_kind(name) is kind


@pytest.mark.parametrize(
    ("field", "a", "b", "same"),
    [
        # A place, with or without its region; never two different regions.
        ("location", "Seattle", "Seattle, WA", True),
        ("location", "Paris", "Paris, France", True),
        ("location", "Denver, Colorado", "Denver, CO", True),
        ("location", "Chicago, IL.", "Chicago, IL", True),
        ("location", "Austin, TX", "Austin, TX, USA", True),
        ("location", "Chicago", "Chicago area", True),
        ("city", "New York City", "NYC", True),
        ("city", "New York, NY", "NYC", True),
        ("city", "New York", "new york", True),
        ("city", "Washington D.C.", "Washington DC", True),
        ("end_location", "LA", "Los Angeles", True),
        ("location", "TX", "Texas", True),
        ("location", "Paris, TX", "Paris, France", False),
        ("location", "Austin, TX", "Austin, USA", False),
        ("location", "Paris", "London", False),
        ("location", "Portland, OR", "Portland, ME", False),
        ("location", "Golden Gate Bridge, San Francisco", "Golden Gate Bridge", False),
        ("location", "12 Main St, Springfield", "12 Main St, Shelbyville", False),
        ("location", "Seattle", "Seattle Center", False),
        ("location", "New York", "New York, NY", True),
        ("city", "DC", "Washington, DC", True),
        ("location", "Vegas", "Las Vegas", True),
        ("city", "Washington", "Washington, DC", False),
        ("destination", "WA", "Washington, DC", False),
        ("location", "IN", "Indiana, PA", False),
        ("country", "China", "China, ME", False),
        ("target_country", "US, UK", "US", False),
        ("region", "CA, OR, WA", "CA", False),
        ("location", "Rio, WI", "Rio", False),
        ("destination", "Vegas", "Las Vegas, NM", False),
        ("location", "GA", "GEO", False),
        ("location", ",", ", WA", False),
        ("country", "America", "US", False),
        ("destination", "acct_1AbCdEf", "acct_1aBcDeF", False),
        ("state", "aBcDeF", "AbCdEf", False),
        ("destination", "logs.prod", "logsprod", False),
        ("origin", "app.example.com", "appexample.com", False),
        ("location", "Zone 1.5", "Zone 15", False),
        ("location", "https://x.example/File", "https://x.example/file", False),
        ("location", "https://a.b.example/x", "https://ab.example/x", False),
        ("location", "47.6,-122.3", "47.6, -122.3", False),
        ("location", "47.6", "47.6, -122.3", False),
        ("state", "IL", "Illinois", True),
        ("state", "LA", "Louisiana", True),
        ("state", "LA", "Los Angeles", False),
        ("country", "U.S", "USA", True),
        ("country", "UK", "United Kingdom", True),
        ("country", "Germany", "DEU", True),
        ("region", "Midwest region", "Midwest", True),
        ("country", "Austria", "Australia", False),
        # In a country's field a two-letter code is the country's ISO code.
        ("country", "CN", "China", True),
        ("country", "CA", "Canada", True),
        ("country", "CA", "California", False),
        ("country", "de", "Germany", True),
        ("state", "CA", "California", True),
        ("state", "CA", "Canada", False),
        ("location", "CN", "China", False),
        ("region", "us-east-1", "us-west-2", False),
        # A date: the same day, or a reading of numbers that can be read two ways.
        ("start_date", "2020-01-01", "01/01/2020", True),
        ("date", "2022-01-01", "1/1/2022", True),
        ("date", "January 1, 2021", "01/01/2021", True),
        ("date", "1st March 2021", "2021-03-01", True),
        ("date", "Jun.1,2022", "2022-06-01", True),
        ("date", "6/1/2023", "06/01/2023", True),
        ("date", "06/01/2023", "2023-06-01", False),
        ("date", "06/01/2023", "2023-01-06", False),
        ("date", "06.01.2023", "06/01/2023", False),
        ("date", "31/12/2020", "2020-12-31", True),
        ("date", "2024-01-01T10:00:00Z", "2024-01-01 10:00+00:00", True),
        ("date", "2024-01-01T11:00:00+01:00", "2024-01-01T10:00:00Z", True),
        ("date", "06/01/2023", "01/06/2023", False),
        ("date", "2020-01-01", "2020-01-02", False),
        ("date", "2020-01-01", "2021-01-01", False),
        ("date", "2024-01-01T10:00", "2024-01-01T10:00Z", False),
        ("date", "2020-02-30", "2020-03-01", False),
        ("date", "this weekend", "weekend", False),
        # A time of day.
        ("time", "12pm", "12:00", True),
        ("start_time", "3:30 PM", "15:30", True),
        ("time", "noon", "12:00:00", True),
        ("time", "3:00", "3pm", False),
        ("time", "12am", "12pm", False),
        ("time", "13pm", "13:00", False),
        ("start_time", "1:30", "01:30:00", False),
        ("time", "1.2pm", "12pm", False),
        # A unit or a currency: one symbol or code.
        ("from_unit", "lb", "pounds", True),
        ("unit", "km", "Kilometers", True),
        ("unit", "miles", "mile", True),
        ("unit", "square meters", "sq. meters", True),
        ("unit", "°C", "celsius", True),
        ("unit", "km", "mi", False),
        ("unit", "m", "minutes", False),
        ("unit", "oz", "fl oz", False),
        ("unit", "KG", "kilograms", True),
        ("unit", "Mg", "mg", False),
        ("unit", "mS", "ms", False),
        ("unit", "gr", "g", False),
        ("unit", "c", "°C", False),
        ("base_currency", "Euros", "EUR", True),
        ("currency", "USD", "US Dollars", True),
        ("currency", "£", "GBP", False),
        ("currency", "C$", "CAD", False),
        ("currency", "USD", "EUR", False),
        ("currency", "dollars", "USD", False),
        ("currency", "CAD", "USD", False),
    ],
)
def test_same_value(field: str, a: str, b: str, same: bool) -> None:
    kind = value_kind(field)
    assert kind is not None
    assert same_value(kind, a, b) is same
    assert same_value(kind, b, a) is same
    if same:
        # Two spellings of one value share a key: the exact signature brings them together.
        assert value_key(kind, a) == value_key(kind, b)


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("2020-01-02", "2020-01-02"),
        ("01/02/2020", "01/02/2020"),
        ("1-2-2020", "01-02-2020"),
        ("02/02/2020", "2020-02-02"),
        ("13/02/2020", "2020-02-13"),
        ("February 2, 2020", "2020-02-02"),
        ("2 Feb 2020", "2020-02-02"),
        ("2020-13-01", None),
        ("soon", None),
        ("99999-01-01", None),
        ("0001-01-01T00:00:00+01:00", None),
        ("9999-12-31T23:59:00-01:00", None),
    ],
)
def test_date_key(text: str, key: str | None) -> None:
    assert date_key(text) == key


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("9am", "09:00:00"),
        ("9:05 p.m.", "21:05:00"),
        ("23:59:59", "23:59:59"),
        ("midnight", "00:00:00"),
        ("3", None),
        ("1:30", None),
        ("1.2pm", None),
    ],
)
def test_time_key(text: str, key: str | None) -> None:
    assert time_key(text) == key


@pytest.mark.parametrize(
    ("path", "name"),
    [("a.b[2]", "b"), ('a["b.c"]', "b.c"), ('a["b.c"][0][1]', "b.c"), ("x", "x"), ("", None)],
)
def test_leaf_name(path: str, name: str | None) -> None:
    assert leaf_name(path) == name


def test_signature_brings_spellings_together_and_keeps_the_args() -> None:
    one = canonicalize({"location": "Seattle", "date": "2020-01-01"}, ToolPolicy())
    two = canonicalize({"location": "Seattle, WA", "date": "01/01/2020"}, ToolPolicy())
    assert one.exact_signature == two.exact_signature
    assert one.args_hash != two.args_hash
    # A place of many words is a value, never free text compared by meaning.
    long = canonicalize({"location": "New York City, NY"}, ToolPolicy())
    assert long.semantic_leaves == ()
    assert json.loads(dict(long.exact_leaves)["location"]) == "New York City, NY"


_SPELLINGS = st.sampled_from(
    [
        "Seattle", "Seattle, WA", "seattle, washington", "Paris", "Paris, TX", "Paris, France",
        "NYC", "New York", "New York, NY", "LA", "Los Angeles", "Louisiana", "2020-01-02",
        "01/02/2020", "02/01/2020", "Jan 2, 2020", "2 February 2020", "3pm", "15:00", "3:00",
        "lb", "pounds", "kg", "EUR", "Euros", "USD", "12:00", "noon",
    ]
)  # fmt: skip
_TEXT = st.one_of(_SPELLINGS, st.text(max_size=40))


@given(kind=st.sampled_from(list(ValueKind)), a=_TEXT, b=_TEXT)
def test_the_relation_is_symmetric_and_needs_one_key(kind: ValueKind, a: str, b: str) -> None:
    assert same_value(kind, a, a)
    assert same_value(kind, a, b) == same_value(kind, b, a)
    if same_value(kind, a, b):
        assert value_key(kind, a) == value_key(kind, b)
