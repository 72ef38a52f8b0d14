"""Where a check runs: on the event loop's own thread when it is alone and light, else in
the thread pool."""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, ParamSpec, TypeVar

from starlette.concurrency import run_in_threadpool
from starlette.types import ASGIApp, Receive, Scope, Send

__all__ = [
    "INLINE_MAX_CHARS",
    "INLINE_MAX_NODES",
    "INLINE_MAX_STRINGS",
    "CheckDispatcher",
    "is_light",
]

P = ParamSpec("P")
T = TypeVar("T")

logger = logging.getLogger(__name__)

# A light check's args: at most 64 values, of which at most 6 strings, and 2,048 characters
# of strings and keys in all. Any string may be a text the model reads (a policy may name
# any field free text), in windows of 120 words: at most 8 model calls, some 20 ms.
INLINE_MAX_NODES = 64
INLINE_MAX_STRINGS = 6
INLINE_MAX_CHARS = 2048


def is_light(args: Any) -> bool:
    """Whether a check of ``args`` is light enough to hold the event loop while it runs
    (read from the args, not from a header the client wrote)."""
    nodes = strings = chars = 0
    stack = [args]
    while stack:
        value = stack.pop()
        nodes += 1
        if isinstance(value, str):
            strings += 1
            chars += len(value)
        elif isinstance(value, dict):
            chars += sum(len(key) for key in value if isinstance(key, str))
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)
        if nodes > INLINE_MAX_NODES or strings > INLINE_MAX_STRINGS or chars > INLINE_MAX_CHARS:
            return False
    return True


class CheckDispatcher:
    """Runs the check route's ``service.check`` call.

    A hop to a worker thread and back wakes two sleeping threads, and the check then runs on
    a core whose caches hold none of the request: 0.2 to 0.3 ms of a 5 ms semantic check at
    concurrency 1 (``docs/benchmarks.md``). So a light check (:func:`is_light`, of a tool
    whose policy does not read the pair model) that is the only request in flight, in a
    service whose checks wait on nothing remote or shared (``inline``: one process on a
    SQLite store, no judge), runs on the event loop's thread. Any other runs in the thread
    pool: concurrent requests overlap there, and a heavy check, or one that may wait on the
    network or another process, never holds the loop.

    A light check can still meet slow work it cannot foresee: a vector group loaded again
    after a purge, a lock another process holds. While the process's own maintenance writes
    (``held_off``), and for ``pause_seconds`` after an inline check took longer than
    ``slow_seconds``, every check runs in the pool.
    """

    def __init__(
        self,
        *,
        inline: bool,
        slow_seconds: float = 0.05,
        pause_seconds: float = 60.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        for name, value in (("slow_seconds", slow_seconds), ("pause_seconds", pause_seconds)):
            if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
                raise ValueError(f"{name} must be a number of seconds, at least 0")
        self.inline = inline
        self._slow_seconds = float(slow_seconds)
        self._pause_seconds = float(pause_seconds)
        self._clock = clock
        self._requests = 0
        self._held = 0
        self._held_lock = threading.Lock()
        self._paused_until = float("-inf")

    @property
    def requests(self) -> int:
        """HTTP requests in flight through :meth:`counting`'s middleware."""
        return self._requests

    def counting(self, app: ASGIApp) -> ASGIApp:
        """``app`` with each HTTP request counted while it is in flight."""

        async def counted(scope: Scope, receive: Receive, send: Send) -> None:
            if scope["type"] != "http":
                await app(scope, receive, send)
                return
            self._requests += 1
            try:
                await app(scope, receive, send)
            finally:
                self._requests -= 1

        return counted

    @property
    def holding(self) -> bool:
        """Whether maintenance holds checks off the loop now (``held_off``)."""
        return self._held > 0

    @contextmanager
    def held_off(self) -> Iterator[None]:
        """No check runs on the loop while the block runs (maintenance that writes)."""
        with self._held_lock:
            self._held += 1
        try:
            yield
        finally:
            with self._held_lock:
                self._held -= 1

    def _may_inline(self) -> bool:
        return self.inline and not self._held and self._clock() >= self._paused_until

    async def run(
        self, light: bool, function: Callable[P, T], *args: P.args, **kwargs: P.kwargs
    ) -> T:
        """``function(*args, **kwargs)``: here if ``light`` and alone, else in a thread."""
        if light and self._may_inline():
            # Requests read in the same turn of the loop as this one have their tasks
            # scheduled but not yet started: one turn lets each of them be counted.
            await asyncio.sleep(0)
            if self._requests <= 1 and self._may_inline():
                started = self._clock()
                try:
                    return function(*args, **kwargs)
                finally:
                    self._pause_if_slow(self._clock() - started)
        return await run_in_threadpool(function, *args, **kwargs)

    def _pause_if_slow(self, seconds: float) -> None:
        if seconds > self._slow_seconds:
            self._paused_until = self._clock() + self._pause_seconds
            logger.info(
                "a check held the event loop for %.0f ms: checks run in the thread pool for %.0f s",
                seconds * 1000,
                self._pause_seconds,
            )
