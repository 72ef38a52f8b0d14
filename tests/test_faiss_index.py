"""The grouped faiss index: cosine in [-1, 1], candidate filtering, eviction."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tooldedup.index.faiss_index import FaissGroupIndex


def _unit(*values: float) -> np.ndarray:
    vector = np.asarray(values, dtype=np.float32)
    return vector / np.linalg.norm(vector)


@pytest.mark.parametrize(
    ("stored", "query", "cosine"),
    [
        ((1.0, 0.0), (1.0, 0.0), 1.0),
        ((1.0, 0.0), (-1.0, 0.0), -1.0),
        ((1.0, 0.0), (0.0, 1.0), 0.0),
        ((1.0, 1.0), (1.0, 0.0), 2**-0.5),
    ],
)
def test_cosine_boundaries(
    stored: tuple[float, float], query: tuple[float, float], cosine: float
) -> None:
    index = FaissGroupIndex(dim=2)
    index.load("g", [7], _unit(*stored)[None, :])
    scores = index.search("g", _unit(*query), [7])
    assert scores[7] == pytest.approx(cosine, abs=1e-6)
    assert -1.0 <= scores[7] <= 1.0


def test_only_candidate_keys_are_scored() -> None:
    index = FaissGroupIndex(dim=2)
    index.load("g", [1, 2, 3], np.stack([_unit(1, 0), _unit(0, 1), _unit(1, 1)]))
    assert set(index.search("g", _unit(1, 0), [2, 3])) == {2, 3}
    assert index.search("other", _unit(1, 0), [1]) == {}
    assert index.search("g", _unit(1, 0), []) == {}


def test_add_goes_only_to_loaded_groups() -> None:
    index = FaissGroupIndex(dim=2)
    index.add("g", 1, _unit(1, 0))
    assert not index.has("g")
    index.load("g", [], np.zeros((0, 2), np.float32))
    index.add("g", 1, _unit(1, 0))
    assert index.search("g", _unit(1, 0), [1])[1] == pytest.approx(1.0)


def test_least_recently_used_groups_are_evicted() -> None:
    index = FaissGroupIndex(dim=2, max_vectors=2)
    index.load("a", [1], _unit(1, 0)[None, :])
    index.load("b", [2], _unit(0, 1)[None, :])
    index.search("a", _unit(1, 0), [1])
    index.load("c", [3], _unit(1, 1)[None, :])
    assert index.has("a")
    assert index.has("c")
    assert not index.has("b")
    assert index.vector_count == 2


@given(
    stored=st.lists(st.integers(0, 30), min_size=1, max_size=12, unique=True),
    asked=st.lists(st.integers(0, 30), max_size=12, unique=True),
    seed=st.integers(0, 2**16),
)
def test_a_search_scores_exactly_the_asked_keys_the_group_holds(
    stored: list[int], asked: list[int], seed: int
) -> None:
    # Whether the group holds only asked keys (no selector) or others too (a selector).
    vectors = np.random.default_rng(seed).normal(size=(len(stored), 4)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    index = FaissGroupIndex(dim=4)
    index.load("g", stored, vectors)
    query = vectors[0]
    found = index.search("g", query, asked)
    expected = {k: float(v @ query) for k, v in zip(stored, vectors, strict=True) if k in asked}
    assert found.keys() == expected.keys()
    for key, cosine in expected.items():
        assert found[key] == pytest.approx(cosine, abs=1e-5)
