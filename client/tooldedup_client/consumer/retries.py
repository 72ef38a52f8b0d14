"""Waiting out tooldedup or the broker: a step retried until it answers."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import TypeVar

from tooldedup_client.consumer.broker import BrokerUnavailable
from tooldedup_client.errors import RateLimited, ServiceUnavailable

__all__ = ["until_answered"]

logger = logging.getLogger("tooldedup_client.consumer.runner")
T = TypeVar("T")


async def until_answered(what: str, step: Callable[[], Awaitable[T]], max_pause: float) -> T:
    """``step`` until it answers; unreachable, busy or rate-limited answers are logged and
    waited out (0.2 s, doubling up to ``max_pause``). Any other error is raised."""
    pause = 0.2
    while True:
        try:
            return await step()
        except (ServiceUnavailable, RateLimited, BrokerUnavailable) as exc:
            text = getattr(exc, "message", None) or str(exc) or type(exc).__name__
            logger.warning("could not %s (%s); retrying in %.1f s", what, text, pause)
        await asyncio.sleep(pause)
        pause = min(max_pause, pause * 2)
