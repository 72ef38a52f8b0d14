"""The cap on how many calls a tenant may store: checked before each new claim."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Protocol

from tooldedup.dedup.errors import TenantCallLimit

__all__ = ["CallCaps", "CapStore"]

# Below the cap by at least this many, a count a second old is exact enough; closer, the
# store is counted again before every claim.
_RECOUNT_MARGIN = 64


class CapStore(Protocol):
    """Where caps are set, and calls counted."""

    def call_caps(self) -> dict[str, int]:
        """Every capped tenant's cap."""
        ...

    def count_calls(self, tenant: str) -> int:
        """How many calls ``tenant`` has stored."""
        ...


class CallCaps:
    """Refuses a tenant's new claim once it stores as many calls as its cap.

    Caps are read again by ``refresh`` (the maintenance thread's round). Counts are cached
    for ``recount_seconds`` while far from the cap, and read before every claim near it.
    The service claims for a capped tenant one at a time in each process; claims made at
    the same moment in several processes can pass the cap by that many: a cap bounds
    storage, it is not a quota to the call. Stored calls are never dropped.
    """

    def __init__(
        self,
        store: CapStore,
        *,
        recount_seconds: float = 1.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._store = store
        self._recount_seconds = recount_seconds
        self._clock = clock
        self._lock = threading.Lock()
        self._caps: dict[str, int] = {}
        self._counts: dict[str, tuple[float, int]] = {}

    def refresh(self) -> None:
        """Read every tenant's cap again."""
        caps = self._store.call_caps()
        with self._lock:
            self._caps = caps

    def applies_to(self, tenant: str) -> bool:
        """Whether ``tenant`` has a cap."""
        return tenant in self._caps

    def admit(self, tenant: str) -> None:
        """Raise ``TenantCallLimit`` if ``tenant`` may store no more calls."""
        cap = self._caps.get(tenant)
        if cap is None:
            return
        now = self._clock()
        with self._lock:
            cached = self._counts.get(tenant)
        fresh = cached is not None and now - cached[0] < self._recount_seconds
        if cached is None or not fresh or cap - cached[1] <= _RECOUNT_MARGIN:
            count = self._store.count_calls(tenant)
            with self._lock:
                self._counts[tenant] = (now, count)
        else:
            count = cached[1]
        if count >= cap:
            raise TenantCallLimit(
                f"tenant {tenant!r} stores {count} calls, its cap of {cap}; calls leave with"
                " retention, or an operator can raise the cap (tooldedup tenants cap)",
                retry_after_seconds=60.0,
            )

    def claimed(self, tenant: str) -> None:
        """Count a claim just stored."""
        with self._lock:
            cached = self._counts.get(tenant)
            if cached is not None:
                self._counts[tenant] = (cached[0], cached[1] + 1)
