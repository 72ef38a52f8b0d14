"""`tooldedup-consumer rabbitmq` against a real RabbitMQ node and a real tooldedup server: the
crash drill, the default key (``message_id``) and a body that is not JSON."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import aio_pika
import httpx
import pytest
from tooldedup_client import AsyncTooldedup
from tooldedup_client.consumer import ConsumerRunner, ConsumerSettings, Message
from tooldedup_client.consumer.rabbitmq import RabbitMQBroker

from tests.brokers import RabbitMQServer, rabbitmq_server
from tests.consumer_crash import (
    Published,
    count,
    drain,
    drill_server,
    kill_repeatedly,
    orders,
    start_consumer,
)
from tests.consumer_handlers import effects

pytestmark = pytest.mark.slow

KILLS = 8


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory, model_cache: Path) -> Iterator[httpx.Client]:
    """One tooldedup server for the module; the drill's tool has a 2 s lease."""
    with drill_server(tmp_path_factory.mktemp("td"), model_cache) as client:
        yield client


@pytest.fixture(scope="module")
def rabbit(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RabbitMQServer]:
    """One RabbitMQ node for the module (it takes seconds to boot); each test its own queue."""
    with rabbitmq_server(tmp_path_factory.mktemp("rabbitmq")) as server:
        yield server


@pytest.fixture
def amqp_url(rabbit: RabbitMQServer) -> str:
    return rabbit.url


async def _publish(url: str, queue: str, bodies: list[Any], ids: list[str | None]) -> None:
    connection = await aio_pika.connect(url)
    async with connection:
        channel = await connection.channel()
        await channel.declare_queue(queue, durable=True)
        for body, message_id in zip(bodies, ids, strict=True):
            raw = body if isinstance(body, bytes) else json.dumps(body).encode()
            await channel.default_exchange.publish(
                aio_pika.Message(
                    raw, message_id=message_id, delivery_mode=aio_pika.DeliveryMode.PERSISTENT
                ),
                routing_key=queue,
            )


async def _take_all(url: str, queue: str) -> list[Any]:
    """Every message now in ``queue``, consumed."""
    connection = await aio_pika.connect(url)
    found = []
    async with connection:
        channel = await connection.channel()
        declared = await channel.declare_queue(queue, durable=True)
        while (message := await declared.get(fail=False)) is not None:
            found.append(json.loads(message.body))
            await message.ack()
    return found


async def _depth(url: str, queue: str) -> int:
    connection = await aio_pika.connect(url)
    async with connection:
        channel = await connection.channel()
        declared = await channel.declare_queue(queue, durable=True)
        return int(declared.declaration_result.message_count or 0)


def test_crash_drill(
    amqp_url: str, service: httpx.Client, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bodies = orders(300, seed=35)
    ids = [f"m-{n}" for n in range(len(bodies))]
    asyncio.run(_publish(amqp_url, "orders", bodies, list(ids)))
    published = Published(frozenset(f"key:{b['order']}" for b in bodies), len(bodies))
    sink, log = tmp_path / "sink.db", tmp_path / "consumer.log"
    args = [
        "rabbitmq",
        "--url", amqp_url,
        "--queue", "orders",
        "--handler", "tests.consumer_handlers:record_effect",
        "--key-field", "order",
        "--server", str(service.base_url),
    ]  # fmt: skip
    letters: list[Any] = []

    def ambiguous() -> set[str]:
        letters.extend(asyncio.run(_take_all(amqp_url, "orders.dead")))
        return {str(d["key"]) for d in letters if d["class"] == "ambiguous"}

    proc = kill_repeatedly(args, sink, log, KILLS, seed=35)
    drain(proc, log, published, ambiguous, sink)
    counts = count(published, KILLS, sink, ambiguous())
    with capsys.disabled():
        print("\n" + counts.line("rabbitmq"))
    assert counts.duplicated == 0, counts
    assert counts.lost == 0, counts
    assert counts.ambiguous <= KILLS, counts
    assert {d["class"] for d in letters} <= {"ambiguous"}, letters
    assert all(d["call_id"] and d["error"] for d in letters)
    assert asyncio.run(_depth(amqp_url, "orders")) == 0


def test_the_default_key_is_the_message_id(amqp_url: str, service: httpx.Client) -> None:
    # The same message id twice (a publisher's retry), and a body that is not JSON. (A
    # message with no id cannot be sent from here: aiormq gives each one a random id.)
    bodies = [{"review": "r1"}, {"review": "r1"}, b"not json"]
    asyncio.run(_publish(amqp_url, "reviews", bodies, ["m-1", "m-1", "m-3"]))
    calls: list[Message] = []

    def tag(message: Message) -> dict[str, object]:
        calls.append(message)
        return {"tags": ["ok"], "for": message.body["review"]}

    async def consume() -> None:
        broker = RabbitMQBroker(amqp_url, "reviews")
        td = AsyncTooldedup(str(service.base_url))
        settings = ConsumerSettings(tool="tag_review", poll_seconds=0.5)
        try:
            await ConsumerRunner(broker, td, tag, settings).run(until_idle=True)
        finally:
            await broker.close()
            await td.aclose()

    asyncio.run(consume())
    # m-1 once; the body that is not JSON reaches the handler as text, which it cannot read.
    assert [m.key for m in calls] == ["amqp:reviews:m-1", "amqp:reviews:m-3"]
    assert calls[1].body == "not json"
    letters = asyncio.run(_take_all(amqp_url, "reviews.dead"))
    assert [(d["class"], d["error"].split(":")[0]) for d in letters] == [("poison", "TypeError")]
    assert asyncio.run(_depth(amqp_url, "reviews")) == 0


def test_a_broker_restart_loses_nothing(
    rabbit: RabbitMQServer, service: httpx.Client, tmp_path: Path
) -> None:
    bodies = [{"order": i} for i in range(40)]
    asyncio.run(_publish(rabbit.url, "restarts", bodies, [f"m-{i}" for i in range(40)]))
    sink, log = tmp_path / "sink.db", tmp_path / "consumer.log"
    args = [
        "rabbitmq",
        "--url", rabbit.url,
        "--queue", "restarts",
        "--handler", "tests.consumer_handlers:record_effect",
        "--key-field", "order",
        "--server", str(service.base_url),
    ]  # fmt: skip
    proc = start_consumer(args, sink, log)
    deadline = time.monotonic() + 20
    while not effects(sink) and time.monotonic() < deadline:
        time.sleep(0.02)
    rabbit.stop()
    rabbit.start()
    published = Published(frozenset(f"key:{i}" for i in range(40)), 40)
    drain(proc, log, published, lambda: set(), sink, timeout=60)
    keys = [key for key, _ in effects(sink)]
    assert sorted(keys) == sorted(published.keys)
    assert asyncio.run(_depth(rabbit.url, "restarts")) == 0
