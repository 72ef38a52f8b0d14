"""Keep a claim's lease in tooldedup alive while its handler runs."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator

from tooldedup_client.client import AsyncTooldedup
from tooldedup_client.errors import LeaseLost, TooldedupError

__all__ = ["kept_alive"]

logger = logging.getLogger(__name__)


async def _renew(
    td: AsyncTooldedup, message_id: str, claim: tuple[str, str], lease_seconds: float
) -> None:
    call_id, check_id = claim
    while True:
        # A third of the lease: two renewals may fail before it runs out.
        await asyncio.sleep(max(0.05, lease_seconds / 3.0))
        try:
            await td.extend_lease(call_id, check_id, seconds=lease_seconds)
        except LeaseLost as exc:
            # Later checks of this call are told to reconcile; the handler runs on, and its
            # report still completes the claim.
            logger.warning("message %s: lease of %s lost: %s", message_id, call_id, exc.message)
            return
        except TooldedupError as exc:
            logger.warning(
                "message %s: could not extend the lease of %s (%s); trying again",
                message_id,
                call_id,
                exc.message,
            )


@contextlib.asynccontextmanager
async def kept_alive(
    td: AsyncTooldedup, message_id: str, claim: tuple[str, str], lease_seconds: float
) -> AsyncIterator[None]:
    """Renew ``claim`` (call id, check id) for ``lease_seconds`` more, every third of it,
    until the block ends."""
    task = asyncio.create_task(_renew(td, message_id, claim, lease_seconds))
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
