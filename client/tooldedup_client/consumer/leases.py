"""Keep both leases alive while a handler runs: the claim's in tooldedup, the broker's own."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator

from tooldedup_client.client import AsyncTooldedup
from tooldedup_client.consumer.broker import Broker, BrokerUnavailable
from tooldedup_client.consumer.message import Delivery
from tooldedup_client.errors import LeaseLost, ServiceUnavailable, TooldedupError

__all__ = ["kept_alive"]

logger = logging.getLogger(__name__)


async def _renew(
    td: AsyncTooldedup,
    broker: Broker,
    delivery: Delivery,
    claim: tuple[str, str] | None,
    lease_seconds: float,
    interval: float,
) -> None:
    holding = claim is not None
    while True:
        await asyncio.sleep(interval)
        if holding and claim is not None:
            call_id, check_id = claim
            try:
                await td.extend_lease(call_id, check_id, seconds=lease_seconds)
            except LeaseLost as exc:
                # Later checks of this call are told to reconcile; the handler runs on,
                # and its report still completes the claim.
                logger.warning("message %s: lease of %s lost: %s", delivery.id, call_id, exc)
                holding = False
            except (ServiceUnavailable, TooldedupError) as exc:
                logger.warning(
                    "message %s: could not extend the lease of %s (%s); trying again",
                    delivery.id,
                    call_id,
                    exc.message,
                )
        try:
            await broker.keep_alive(delivery)
        except BrokerUnavailable as exc:
            logger.warning("message %s: broker lease not renewed: %s", delivery.id, exc)


@contextlib.asynccontextmanager
async def kept_alive(
    td: AsyncTooldedup,
    broker: Broker,
    delivery: Delivery,
    claim: tuple[str, str] | None,
    lease_seconds: float,
    every: float,
) -> AsyncIterator[None]:
    """Renew ``claim`` (call id, check id) and the broker's hold on ``delivery`` every
    ``every`` seconds, or every third of ``lease_seconds`` if that is sooner, until the block
    ends."""
    interval = max(0.05, min(every, lease_seconds / 3.0))
    task = asyncio.create_task(_renew(td, broker, delivery, claim, lease_seconds, interval))
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
