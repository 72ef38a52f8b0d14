"""NATS JetStream through a durable pull consumer (``pip install 'tooldedup-client[nats]'``).

The key is stream + stream sequence. Unacked messages come back after the consumer's
``ack_wait``, so that is recovery on start; ``in_progress`` resets it while a handler runs.
The durable consumer is created (explicit acks, 30 s ``ack_wait``) only if it is missing.
"""

from __future__ import annotations

from tooldedup_client.consumer.broker import BrokerRefused, BrokerUnavailable
from tooldedup_client.consumer.dead_letters import DeadLetter
from tooldedup_client.consumer.key_recipes import nats_key
from tooldedup_client.consumer.message import Delivery
from tooldedup_client.consumer.payloads import decode_body

__all__ = ["NatsJetStreamBroker"]

try:
    import nats
    from nats.aio.client import Client as NatsClient
    from nats.aio.msg import Msg
    from nats.errors import ConnectionClosedError, NoRespondersError, NoServersError
    from nats.errors import TimeoutError as NatsTimeout
    from nats.js.api import AckPolicy, ConsumerConfig, StreamConfig
    from nats.js.client import JetStreamContext
    from nats.js.errors import NotFoundError
except ImportError as exc:  # pragma: no cover - depends on the extra
    raise ImportError("NATS needs: pip install 'tooldedup-client[nats]'") from exc

_DOWN = (ConnectionClosedError, NoRespondersError, NoServersError, OSError, NatsTimeout)


class NatsJetStreamBroker:
    """One worker of a JetStream durable pull consumer."""

    def __init__(
        self,
        url: str,
        stream: str,
        durable: str,
        *,
        dead_letter: str | None = None,
        ack_wait_seconds: float = 30.0,
    ) -> None:
        self.url = url
        self.stream = stream
        self.durable = durable
        self.dead_letter_subject = dead_letter or f"deadletter.{stream}"
        self.ack_wait_seconds = ack_wait_seconds
        self._nc: NatsClient | None = None
        self._js: JetStreamContext | None = None
        self._sub: JetStreamContext.PullSubscription | None = None

    @property
    def name(self) -> str:
        """``<stream>:<durable>``."""
        return f"{self.stream}:{self.durable}"

    async def start(self) -> None:
        """Connect; create the durable consumer and a dead-letter stream if missing."""
        if self._sub is not None:
            return
        try:
            if self._nc is None:
                self._nc = await nats.connect(self.url, max_reconnect_attempts=-1)
            js = self._js = self._nc.jetstream()
            try:
                await js.stream_info(self.stream)
            except NotFoundError as exc:
                raise BrokerRefused(f"nats: no stream {self.stream!r}; create it first") from exc
            try:
                await js.consumer_info(self.stream, self.durable)
            except NotFoundError:
                config = ConsumerConfig(
                    durable_name=self.durable,
                    ack_policy=AckPolicy.EXPLICIT,
                    ack_wait=self.ack_wait_seconds,
                )
                await js.add_consumer(self.stream, config)
            try:
                await js.find_stream_name_by_subject(self.dead_letter_subject)
            except NotFoundError:
                name = f"{self.stream}_DEAD"
                await js.add_stream(StreamConfig(name=name, subjects=[self.dead_letter_subject]))
            self._sub = await js.pull_subscribe_bind(durable=self.durable, stream=self.stream)
        except _DOWN as exc:
            raise BrokerUnavailable(f"nats: {exc}") from exc

    async def fetch(self, batch: int, wait_seconds: float) -> list[Delivery]:
        """Up to ``batch`` messages (redeliveries after ``ack_wait`` among them)."""
        if self._sub is None:
            await self.start()
        assert self._sub is not None
        try:
            messages = await self._sub.fetch(batch, timeout=max(0.05, wait_seconds))
        except NatsTimeout:
            return []
        except _DOWN as exc:
            raise BrokerUnavailable(f"nats: {exc}") from exc
        return [self._delivery(message) for message in messages]

    def _delivery(self, message: Msg) -> Delivery:
        meta = message.metadata
        sequence = meta.sequence.stream
        return Delivery(
            id=f"{self.stream}:{sequence}",
            body=decode_body(message.data),
            headers=dict(message.headers or {}),
            default_key=nats_key(self.stream, sequence),
            handle=message,
            delivered=meta.num_delivered or 1,
        )

    async def keep_alive(self, delivery: Delivery) -> None:
        """``+WPI``: the consumer's ``ack_wait`` starts again."""
        message = delivery.handle
        assert isinstance(message, Msg)
        try:
            await message.in_progress()
        except _DOWN as exc:
            raise BrokerUnavailable(f"nats: {exc}") from exc

    async def dead_letter(self, delivery: Delivery, letter: DeadLetter) -> None:
        """Publish the letter to the dead-letter subject, acknowledged by JetStream."""
        assert self._js is not None
        headers = {"class": letter.failure_class.value, "route": letter.route.value}
        try:
            await self._js.publish(
                self.dead_letter_subject, letter.to_json().encode(), headers=headers
            )
        except _DOWN as exc:
            raise BrokerUnavailable(f"nats: {exc}") from exc

    async def ack(self, delivery: Delivery) -> None:
        """Ack, and wait for JetStream to confirm it."""
        message = delivery.handle
        assert isinstance(message, Msg)
        try:
            await message.ack_sync(timeout=5.0)
        except _DOWN as exc:
            raise BrokerUnavailable(f"nats: {exc}") from exc

    async def close(self) -> None:
        """Drain and close the connection."""
        if self._nc is not None:
            await self._nc.close()
            self._nc = None
            self._js = None
            self._sub = None
