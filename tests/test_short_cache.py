"""ShortTextCache: short arguments remembered, long ones worked out every time."""

from __future__ import annotations

import pytest

from tooldedup.dedup.short_cache import ShortTextCache


@pytest.mark.parametrize(
    ("texts", "calls_for_three"),
    [(("abc",), 1), (("abcd",), 1), (("abcde",), 3), (("ab", "abcde"), 3), (("ab", "cd"), 1)],
)
def test_only_arguments_within_the_bound_are_remembered(
    texts: tuple[str, ...], calls_for_three: int
) -> None:
    calls: list[tuple[str, ...]] = []

    def joined(*parts: str) -> str:
        calls.append(parts)
        return "+".join(parts)

    cache = ShortTextCache(joined, maxsize=8, max_chars=4)
    assert [cache(*texts) for _ in range(3)] == ["+".join(texts)] * 3
    assert len(calls) == calls_for_three
    cache.cache_clear()
    cache(*texts)
    assert len(calls) == calls_for_three + 1


@pytest.mark.parametrize(("maxsize", "max_chars"), [(0, 4), (8, -1)])
def test_bounds_are_checked(maxsize: int, max_chars: int) -> None:
    with pytest.raises(ValueError, match="maxsize"):
        ShortTextCache(str.upper, maxsize=maxsize, max_chars=max_chars)
