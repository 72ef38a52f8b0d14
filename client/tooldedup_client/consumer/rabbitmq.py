"""RabbitMQ through aio-pika (``pip install 'tooldedup-client[rabbitmq]'``).

The key is the publisher's ``message_id`` (a message without one needs ``--key-field``).
Unacked deliveries return to the queue when a consumer's connection drops, so recovery on
start is the broker's redelivery. AMQP 0-9-1 has no per-delivery lease to extend: heartbeats
keep the connection alive (the handler runs off the event loop), and the broker's
``consumer_timeout`` must stay above the longest handler.
"""

from __future__ import annotations

import asyncio

from tooldedup_client.consumer.broker import BrokerUnavailable
from tooldedup_client.consumer.dead_letters import DeadLetter
from tooldedup_client.consumer.key_recipes import rabbitmq_key
from tooldedup_client.consumer.message import Delivery
from tooldedup_client.consumer.payloads import decode_body

__all__ = ["RabbitMQBroker"]

try:
    import aio_pika
    from aio_pika.abc import AbstractIncomingMessage, AbstractRobustConnection
    from aio_pika.exceptions import AMQPError, ChannelInvalidStateError
except ImportError as exc:  # pragma: no cover - depends on the extra
    raise ImportError("RabbitMQ needs: pip install 'tooldedup-client[rabbitmq]'") from exc

_DOWN = (AMQPError, ConnectionError, OSError, asyncio.TimeoutError)


class RabbitMQBroker:
    """One consumer of a durable RabbitMQ queue, ``batch`` deliveries unacked at most."""

    def __init__(
        self,
        url: str,
        queue: str,
        *,
        consumer_tag: str | None = None,
        dead_letter_queue: str | None = None,
    ) -> None:
        self.url = url
        self.queue = queue
        self.consumer_tag = consumer_tag
        self.dead_letter_queue = dead_letter_queue or f"{queue}.dead"
        self._connection: AbstractRobustConnection | None = None
        self._inbox: asyncio.Queue[AbstractIncomingMessage] = asyncio.Queue()
        self._prefetch = 0

    @property
    def name(self) -> str:
        """The queue's name."""
        return self.queue

    async def start(self) -> None:
        """Connect (reconnecting by itself later), declare both queues durable."""
        if self._connection is not None:
            return
        try:
            self._connection = await aio_pika.connect_robust(self.url)
        except _DOWN as exc:
            raise BrokerUnavailable(f"rabbitmq: {exc}") from exc

    async def _subscribe(self, batch: int) -> None:
        assert self._connection is not None
        channel = await self._connection.channel()
        await channel.set_qos(prefetch_count=batch)
        await channel.declare_queue(self.dead_letter_queue, durable=True)
        queue = await channel.declare_queue(self.queue, durable=True)
        await queue.consume(self._inbox.put, consumer_tag=self.consumer_tag)
        self._prefetch = batch

    async def fetch(self, batch: int, wait_seconds: float) -> list[Delivery]:
        """Up to ``batch`` deliveries: redelivered ones come first, as the broker sends them."""
        try:
            if self._prefetch == 0:
                await self.start()
                await self._subscribe(batch)
            first = await asyncio.wait_for(self._inbox.get(), timeout=wait_seconds)
        except TimeoutError:
            return []
        except _DOWN as exc:
            raise BrokerUnavailable(f"rabbitmq: {exc}") from exc
        got = [first]
        while len(got) < batch and not self._inbox.empty():
            got.append(self._inbox.get_nowait())
        return [self._delivery(message) for message in got]

    def _delivery(self, message: AbstractIncomingMessage) -> Delivery:
        headers = {str(k): str(v) for k, v in (message.headers or {}).items()}
        message_id = message.message_id or ""
        return Delivery(
            id=message_id or f"tag:{message.delivery_tag}",
            body=decode_body(message.body),
            headers=headers,
            default_key=rabbitmq_key(self.queue, message_id) if message_id else "",
            handle=message,
            delivered=2 if message.redelivered else 1,
        )

    async def keep_alive(self, delivery: Delivery) -> None:
        """Nothing per delivery: AMQP has no lease to extend (heartbeats keep the link)."""

    async def dead_letter(self, delivery: Delivery, letter: DeadLetter) -> None:
        """Publish the letter, persistent and confirmed, to the dead-letter queue."""
        assert self._connection is not None
        try:
            channel = await self._connection.channel()
            try:
                await channel.default_exchange.publish(
                    aio_pika.Message(
                        letter.to_json().encode(),
                        content_type="application/json",
                        delivery_mode=aio_pika.DeliveryMode.PERSISTENT,
                        headers={"class": letter.failure_class.value, "route": letter.route.value},
                    ),
                    routing_key=self.dead_letter_queue,
                )
            finally:
                await channel.close()
        except _DOWN as exc:
            raise BrokerUnavailable(f"rabbitmq: {exc}") from exc

    async def ack(self, delivery: Delivery) -> None:
        """Ack the delivery on the channel it came on."""
        message = delivery.handle
        assert isinstance(message, AbstractIncomingMessage)
        try:
            await message.ack()
        except ChannelInvalidStateError:
            # The channel closed since: the broker requeued the message, and its next
            # check answers from the store; acking here is neither possible nor needed.
            pass
        except _DOWN as exc:
            raise BrokerUnavailable(f"rabbitmq: {exc}") from exc

    async def close(self) -> None:
        """Close the connection (unacked deliveries go back to the queue)."""
        if self._connection is not None:
            await self._connection.close()
            self._connection = None
