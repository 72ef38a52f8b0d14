"""Where a check runs: on the event loop's own thread when it is alone and light, else in
the thread pool."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, ParamSpec, TypeVar

from starlette.concurrency import run_in_threadpool
from starlette.types import ASGIApp, Receive, Scope, Send

__all__ = ["INLINE_MAX_BODY_BYTES", "INLINE_MAX_STRINGS", "CheckDispatcher", "is_light"]

P = ParamSpec("P")
T = TypeVar("T")

# A light check: a body of at most 2 KiB holding at most 6 strings. Any string may be a text
# the model reads (a policy may name any field free text), in windows of 120 words: at most
# 8 model calls, some 20 ms, however the service reads the body.
INLINE_MAX_BODY_BYTES = 2048
INLINE_MAX_STRINGS = 6


def is_light(args: Any, body_bytes: int | None) -> bool:
    """Whether a check of ``args``, sent in a body of ``body_bytes`` (None: not declared),
    is light enough to hold the event loop while it runs."""
    if body_bytes is None or body_bytes > INLINE_MAX_BODY_BYTES:
        return False
    strings = 0
    stack = [args]
    while stack:
        value = stack.pop()
        if isinstance(value, str):
            strings += 1
            if strings > INLINE_MAX_STRINGS:
                return False
        elif isinstance(value, dict):
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)
    return True


class CheckDispatcher:
    """Runs the check route's ``service.check`` call.

    A hop to a worker thread and back wakes two sleeping threads, and the check then runs on
    a core whose caches hold none of the request: 0.2 to 0.3 ms of a 5 ms semantic check at
    concurrency 1 (``docs/benchmarks.md``). So a light check (:func:`is_light`) that is the
    only request in flight, in a service whose checks wait on nothing remote or shared
    (``inline``: one process on a SQLite store, no judge), runs on the event loop's thread,
    unless its tool's policy reads the pair model (a model call per candidate).
    Any other runs in the thread pool: concurrent requests overlap there, and a heavy check,
    or one that may wait on the network or on another process, never holds the loop. A
    request that arrives while a check runs inline waits for it: one light, local check.
    """

    def __init__(self, *, inline: bool) -> None:
        self.inline = inline
        self._requests = 0

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

    async def run(
        self, light: bool, function: Callable[P, T], *args: P.args, **kwargs: P.kwargs
    ) -> T:
        """``function(*args, **kwargs)``: here if ``light`` and alone, else in a thread."""
        if self.inline and light:
            # Requests read in the same turn of the loop as this one have their tasks
            # scheduled but not yet started: one turn lets each of them be counted.
            await asyncio.sleep(0)
            if self._requests <= 1:
                return function(*args, **kwargs)
        return await run_in_threadpool(function, *args, **kwargs)
