"""Redis Streams through a consumer group (``pip install 'tooldedup-client[redis]'``).

The key is stream + entry id. Recovery on start reads this consumer's own pending entries;
entries a dead consumer left idle longer than ``claim_idle_seconds`` are taken over with
XAUTOCLAIM. While a handler runs, XCLAIM ... JUSTID to ourselves resets the entry's idle
time, so no other consumer takes it over.
"""

from __future__ import annotations

from typing import Any

from tooldedup_client.consumer.broker import BrokerRefused, BrokerUnavailable
from tooldedup_client.consumer.dead_letters import DeadLetter
from tooldedup_client.consumer.key_recipes import redis_key
from tooldedup_client.consumer.message import Delivery

__all__ = ["RedisStreamsBroker"]

try:
    import redis.asyncio as aioredis
    from redis.exceptions import ConnectionError as _ConnectionError
    from redis.exceptions import ResponseError
    from redis.exceptions import TimeoutError as _TimeoutError
except ImportError as exc:  # pragma: no cover - depends on the extra
    raise ImportError("Redis Streams needs: pip install 'tooldedup-client[redis]'") from exc

_DOWN = (_ConnectionError, _TimeoutError, OSError)


class RedisStreamsBroker:
    """One consumer of a Redis stream's consumer group."""

    def __init__(
        self,
        url: str,
        stream: str,
        group: str,
        consumer: str,
        *,
        dead_letter_stream: str | None = None,
        claim_idle_seconds: float = 30.0,
    ) -> None:
        self.url = url
        self.stream = stream
        self.group = group
        self.consumer = consumer
        self.dead_letter_stream = dead_letter_stream or f"{stream}:dead"
        self.claim_idle_ms = int(claim_idle_seconds * 1000)
        self._redis: aioredis.Redis | None = None
        # This consumer's own pending entries are read once, from the start, on start.
        self._own_cursor: str | None = "0-0"
        self._claim_cursor = "0-0"

    @property
    def name(self) -> str:
        """``<stream>:<group>``."""
        return f"{self.stream}:{self.group}"

    def _client(self) -> aioredis.Redis:
        if self._redis is None:
            raise RuntimeError("start() the broker first")
        return self._redis

    async def start(self) -> None:
        """Connect; create the group (from the stream's start) if it is missing."""
        if self._redis is None:
            self._redis = aioredis.from_url(self.url, decode_responses=True)
        try:
            await self._client().xgroup_create(self.stream, self.group, id="0", mkstream=True)
        except ResponseError as exc:
            if "BUSYGROUP" not in str(exc):
                raise BrokerRefused(f"redis: stream {self.stream!r}: {exc}") from exc
        except _DOWN as exc:
            raise BrokerUnavailable(f"redis: {exc}") from exc

    def _deliveries(self, entries: list[Any]) -> list[Delivery]:
        found = []
        for entry_id, fields in entries:
            if fields is None:
                continue  # trimmed from the stream while pending: nothing left to handle
            found.append(
                Delivery(
                    id=entry_id,
                    body=dict(fields),
                    headers={},
                    default_key=redis_key(self.stream, entry_id),
                    handle=entry_id,
                )
            )
        return found

    async def fetch(self, batch: int, wait_seconds: float) -> list[Delivery]:
        """Own pending entries, then a dead consumer's idle ones, then new entries."""
        redis = self._client()
        try:
            if self._own_cursor is not None:
                read: Any = await redis.xreadgroup(
                    self.group, self.consumer, {self.stream: self._own_cursor}, count=batch
                )
                entries = read[0][1] if read else []
                if entries:
                    self._own_cursor = entries[-1][0]
                    found = self._deliveries(entries)
                    if found:
                        return found
                else:
                    self._own_cursor = None
            claimed: Any = await redis.xautoclaim(
                self.stream,
                self.group,
                self.consumer,
                self.claim_idle_ms,
                start_id=self._claim_cursor,
                count=batch,
            )
            self._claim_cursor = claimed[0]
            found = self._deliveries(claimed[1])
            if found:
                return found
            block = max(1, int(wait_seconds * 1000))
            read = await redis.xreadgroup(
                self.group, self.consumer, {self.stream: ">"}, count=batch, block=block
            )
        except _DOWN as exc:
            raise BrokerUnavailable(f"redis: {exc}") from exc
        except ResponseError as exc:
            if "NOGROUP" in str(exc):
                # The stream was deleted or the server lost it: make the group again.
                await self.start()
                return []
            raise BrokerRefused(f"redis: stream {self.stream!r}: {exc}") from exc
        return self._deliveries(read[0][1]) if read else []

    async def keep_alive(self, delivery: Delivery) -> None:
        """Reset the pending entry's idle time: claim it again, to this consumer."""
        try:
            await self._client().xclaim(
                self.stream, self.group, self.consumer, 0, [str(delivery.handle)], justid=True
            )
        except _DOWN as exc:
            raise BrokerUnavailable(f"redis: {exc}") from exc

    async def dead_letter(self, delivery: Delivery, letter: DeadLetter) -> None:
        """XADD the letter to the dead-letter stream."""
        fields = {
            "letter": letter.to_json(),
            "class": letter.failure_class.value,
            "route": letter.route.value,
            "message_id": letter.message_id,
            "call_id": letter.call_id or "",
        }
        try:
            await self._client().xadd(self.dead_letter_stream, fields)  # type: ignore[arg-type]
        except _DOWN as exc:
            raise BrokerUnavailable(f"redis: {exc}") from exc

    async def ack(self, delivery: Delivery) -> None:
        """XACK the entry."""
        try:
            await self._client().xack(self.stream, self.group, str(delivery.handle))
        except _DOWN as exc:
            raise BrokerUnavailable(f"redis: {exc}") from exc

    async def close(self) -> None:
        """Close the connection pool."""
        if self._redis is not None:
            await self._redis.aclose()
            self._redis = None
