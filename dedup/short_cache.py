"""A memo of a function's answers, kept for short text arguments only."""

from __future__ import annotations

from collections.abc import Callable
from functools import _CacheInfo, lru_cache
from typing import Generic, TypeVar

__all__ = ["ShortTextCache"]

R = TypeVar("R")


class ShortTextCache(Generic[R]):
    """``function`` of text arguments, remembered for the last ``maxsize`` calls whose every
    argument is at most ``max_chars`` long; a longer one is worked out each time, so the memo
    stays small whatever callers send (and a long text is rarely sent twice)."""

    def __init__(self, function: Callable[..., R], *, maxsize: int, max_chars: int) -> None:
        if maxsize < 1 or max_chars < 0:
            raise ValueError("maxsize must be at least 1 and max_chars at least 0")
        self._function = function
        self._remembered = lru_cache(maxsize=maxsize)(function)
        self._max_chars = max_chars

    def __call__(self, *texts: str) -> R:
        """``function(*texts)``, from the memo where it may be kept."""
        # A loop, not ``any`` over a generator: called for each word of a text, where the
        # generator's frame cost more than the memo saved.
        for text in texts:
            if len(text) > self._max_chars:
                return self._function(*texts)
        return self._remembered(*texts)

    def cache_info(self) -> _CacheInfo:
        """Hits, misses and size of the memo (``functools.lru_cache``'s)."""
        return self._remembered.cache_info()

    def cache_clear(self) -> None:
        """Forget every remembered answer."""
        self._remembered.cache_clear()
