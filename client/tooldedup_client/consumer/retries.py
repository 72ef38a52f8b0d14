"""Waiting out tooldedup or the broker: a step retried until it answers."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import TypeVar

from tooldedup_client.consumer.broker import BrokerUnavailable
from tooldedup_client.errors import RateLimited, ServiceUnavailable

__all__ = ["StopRequested", "until_answered"]

logger = logging.getLogger("tooldedup_client.consumer.runner")
T = TypeVar("T")


class StopRequested(Exception):
    """A stop was asked for while a step was being waited out: the wait gave up."""


async def until_answered(
    what: str,
    step: Callable[[], Awaitable[T]],
    max_pause: float,
    *,
    stop: asyncio.Event | None = None,
) -> T:
    """``step`` until it answers; unreachable, busy or rate-limited answers are logged and
    waited out (0.2 s, doubling up to ``max_pause``). Any other error is raised.

    With ``stop``, the pauses end as soon as it is set, and ``StopRequested`` is raised
    instead of trying again."""
    pause = 0.2
    while True:
        try:
            return await step()
        except (ServiceUnavailable, RateLimited, BrokerUnavailable) as exc:
            text = getattr(exc, "message", None) or str(exc) or type(exc).__name__
            if stop is not None and stop.is_set():
                raise StopRequested(f"stopped while trying to {what} ({text})") from exc
            logger.warning("could not %s (%s); retrying in %.1f s", what, text, pause)
        if stop is None:
            await asyncio.sleep(pause)
        else:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), pause)
            if stop.is_set():
                raise StopRequested(f"stopped while trying to {what}")
        pause = min(max_pause, pause * 2)
