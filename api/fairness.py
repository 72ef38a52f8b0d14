"""Fair use of worker threads: checks of one scope and tool queue on the event loop."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Hashable
from contextlib import asynccontextmanager

__all__ = ["ScopeGate"]


class ScopeGate:
    """Lets one check per key into the thread pool at a time.

    The core serialises checks of one scope and tool anyway; without this gate, a burst in
    one session would fill every worker thread with checks waiting on that session's lock,
    and an unrelated session (or ``/healthz``) would queue behind them.
    """

    def __init__(self) -> None:
        self._locks: dict[Hashable, tuple[asyncio.Lock, list[int]]] = {}

    @asynccontextmanager
    async def hold(self, key: Hashable) -> AsyncIterator[None]:
        """Wait, on the event loop, until ``key`` is free; hold it for the block."""
        lock, users = self._locks.setdefault(key, (asyncio.Lock(), [0]))
        users[0] += 1
        try:
            async with lock:
                yield
        finally:
            users[0] -= 1
            if users[0] == 0:
                del self._locks[key]

    def __len__(self) -> int:
        return len(self._locks)
