"""Fair use of worker threads: the checks of one scope queue on the event loop."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Hashable
from contextlib import asynccontextmanager

__all__ = ["ScopeGate"]


class ScopeGate:
    """Lets one check per scope (session) into the thread pool at a time.

    Without this gate, a burst in one session, or one session spread over many tool names,
    would fill every worker thread, and an unrelated session (or ``/healthz``) would queue
    behind it. Checks of one session are one agent's, and run one at a time anyway.
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
