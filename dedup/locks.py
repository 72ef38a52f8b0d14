"""A lock per key, created on first use and dropped when nobody holds or waits for it."""

from __future__ import annotations

import threading
from collections.abc import Hashable, Iterator
from contextlib import contextmanager

__all__ = ["KeyedLocks"]


class KeyedLocks:
    """Mutual exclusion per key: two keys never share a lock, so they never wait on each other.

    Striped locks let an unrelated session wait behind a slow one that hashes to the same
    stripe; here only checks of the same key serialise.
    """

    def __init__(self) -> None:
        self._mutex = threading.Lock()
        self._locks: dict[Hashable, tuple[threading.Lock, list[int]]] = {}

    @contextmanager
    def hold(self, key: Hashable) -> Iterator[None]:
        """Hold ``key``'s lock for the block."""
        with self._mutex:
            lock, users = self._locks.setdefault(key, (threading.Lock(), [0]))
            users[0] += 1
        try:
            with lock:
                yield
        finally:
            with self._mutex:
                users[0] -= 1
                if users[0] == 0:
                    del self._locks[key]
