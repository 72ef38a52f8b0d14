"""Token-aware backpressure: a sliding minute of the tokens handlers used."""

from __future__ import annotations

import asyncio
import collections
import logging
import time
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["TokenBudget", "tokens_in_result"]

logger = logging.getLogger("tooldedup_client.consumer.runner")
_WINDOW = 60.0


def tokens_in_result(result: Any) -> int:
    """Tokens a handler's result reports in its ``usage`` (``total_tokens``, or
    ``input_tokens`` + ``output_tokens``, or ``prompt_tokens`` + ``completion_tokens``)."""
    usage = result.get("usage") if isinstance(result, Mapping) else None
    if not isinstance(usage, Mapping):
        return 0
    total = usage.get("total_tokens")
    if isinstance(total, int) and not isinstance(total, bool):
        return max(0, total)
    found = 0
    for name in ("input_tokens", "output_tokens", "prompt_tokens", "completion_tokens"):
        value = usage.get(name)
        if isinstance(value, int) and not isinstance(value, bool):
            found += max(0, value)
    return found


class TokenBudget:
    """At most ``tokens_per_minute`` tokens in any sliding minute (``window_seconds``).

    Polling pauses before the budget runs out: when the tokens of the last minute plus the
    largest single message seen so far would pass it. Lag grows instead of 429s.
    """

    def __init__(
        self,
        tokens_per_minute: int,
        *,
        window_seconds: float = _WINDOW,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if tokens_per_minute < 1:
            raise ValueError("tokens_per_minute must be 1 or more")
        self.tokens_per_minute = tokens_per_minute
        self._window = window_seconds
        self._clock = clock
        self._spent: collections.deque[tuple[float, int]] = collections.deque()
        self._largest = 0
        self.tokens_used = 0
        self.paused_seconds = 0.0

    def spend(self, tokens: int) -> None:
        """Count one message's tokens."""
        if tokens <= 0:
            return
        self._spent.append((self._clock(), tokens))
        self._largest = max(self._largest, tokens)
        self.tokens_used += tokens

    def in_window(self) -> int:
        """Tokens spent in the last minute."""
        horizon = self._clock() - self._window
        while self._spent and self._spent[0][0] <= horizon:
            self._spent.popleft()
        return sum(tokens for _, tokens in self._spent)

    def wait_seconds(self) -> float:
        """How long to pause before the next message may start (0: go on)."""
        used = self.in_window()
        if not self._spent or used + self._largest <= self.tokens_per_minute:
            return 0.0
        # Until enough of the oldest spending leaves the window.
        need = used + self._largest - self.tokens_per_minute
        freed = 0
        for at, tokens in self._spent:
            freed += tokens
            if freed >= need:
                return max(0.0, at + self._window - self._clock())
        return max(0.0, self._spent[-1][0] + self._window - self._clock())

    def paused(self, seconds: float) -> None:
        """Count time spent paused."""
        self.paused_seconds += seconds

    async def pause(self, stop: asyncio.Event) -> None:
        """Wait out ``wait_seconds`` (or until ``stop``), logged and counted as paused."""
        wait = self.wait_seconds()
        if wait <= 0:
            return
        logger.info(
            "token budget: %d of %d tokens used in the last minute; pausing %.1f s",
            self.in_window(),
            self.tokens_per_minute,
            wait,
        )
        started = self._clock()
        try:
            await asyncio.wait_for(stop.wait(), timeout=wait)
        except TimeoutError:
            pass
        self.paused(self._clock() - started)
