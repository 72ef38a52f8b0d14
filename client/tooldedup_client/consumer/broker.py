"""The one protocol every broker adapter implements, and the error it raises when the broker is
out of reach."""

from __future__ import annotations

from typing import Protocol

from tooldedup_client.consumer.dead_letters import DeadLetter
from tooldedup_client.consumer.message import Delivery

__all__ = ["Broker", "BrokerRefused", "BrokerUnavailable", "ConsumerRefused"]


class BrokerUnavailable(Exception):
    """The broker did not answer; the runner waits and tries again."""


class ConsumerRefused(Exception):
    """The consumer cannot run as configured: no retry will help."""


class BrokerRefused(ConsumerRefused):
    """The broker answered no (no such stream, a key of another type)."""


class Broker(Protocol):
    """A stream or queue read at least once: fetch, keep alive, dead-letter, ack."""

    @property
    def name(self) -> str:
        """Stream (or queue) and group, as the default session names them."""
        ...

    async def start(self) -> None:
        """Connect, and create the group or consumer if it is missing."""
        ...

    async def fetch(self, batch: int, wait_seconds: float) -> list[Delivery]:
        """Up to ``batch`` messages: this consumer's own unacked ones first, then those a dead
        consumer left idle, then new ones (waiting up to ``wait_seconds`` for those)."""
        ...

    async def keep_alive(self, delivery: Delivery) -> None:
        """Tell the broker this consumer still works on ``delivery``."""
        ...

    async def dead_letter(self, delivery: Delivery, letter: DeadLetter) -> None:
        """Publish ``letter`` where people and tools read dead letters (before the ack)."""
        ...

    async def ack(self, delivery: Delivery) -> None:
        """Commit ``delivery``: the broker never delivers it again."""
        ...

    async def close(self) -> None:
        """Disconnect."""
        ...
