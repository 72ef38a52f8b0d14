"""`tooldedup-consumer nats` against a real nats-server (JetStream) and a real tooldedup server:
the crash drill, and the default key (stream + sequence)."""

from __future__ import annotations

import asyncio
import json
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import nats as nats_client
import pytest
from nats.js.api import AckPolicy, ConsumerConfig
from tooldedup_client import AsyncTooldedup
from tooldedup_client.consumer import ConsumerRunner, ConsumerSettings, Message
from tooldedup_client.consumer.nats_jetstream import NatsJetStreamBroker

from tests.brokers import NatsServer, nats_server
from tests.consumer_crash import (
    CONSUMER,
    Published,
    consumer_env,
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


@pytest.fixture
def nats(tmp_path: Path) -> Iterator[NatsServer]:
    with nats_server(tmp_path / "nats") as server:
        yield server


@pytest.fixture
def nats_url(nats: NatsServer) -> str:
    return nats.url


async def _publish(url: str, stream: str, bodies: list[Any], ack_wait: float) -> None:
    """A stream of ``bodies`` and a durable consumer of it whose unacked messages come back
    after ``ack_wait`` seconds."""
    nc = await nats_client.connect(url)
    try:
        js = nc.jetstream()
        await js.add_stream(name=stream, subjects=[f"{stream}.in"])
        config = ConsumerConfig(
            durable_name="workers", ack_policy=AckPolicy.EXPLICIT, ack_wait=ack_wait
        )
        await js.add_consumer(stream, config)
        for body in bodies:
            await js.publish(f"{stream}.in", json.dumps(body).encode())
    finally:
        await nc.close()


async def _dead_letters(url: str, stream: str) -> list[Any]:
    nc = await nats_client.connect(url)
    try:
        js = nc.jetstream()
        try:
            info = await js.stream_info(f"{stream}_DEAD")
        except nats_client.js.errors.NotFoundError:
            return []
        found = []
        for seq in range(info.state.first_seq, info.state.last_seq + 1):
            found.append(json.loads((await js.get_msg(f"{stream}_DEAD", seq)).data or b"{}"))
        return found
    finally:
        await nc.close()


async def _unacked(url: str, stream: str) -> tuple[int, int]:
    """The durable consumer's (pending, unacked) counts."""
    nc = await nats_client.connect(url)
    try:
        info = await nc.jetstream().consumer_info(stream, "workers")
        return info.num_pending or 0, info.num_ack_pending or 0
    finally:
        await nc.close()


def test_crash_drill(
    nats_url: str, service: httpx.Client, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bodies = orders(300, seed=36)
    asyncio.run(_publish(nats_url, "ORDERS", bodies, ack_wait=2.0))
    published = Published(frozenset(f"key:{b['order']}" for b in bodies), len(bodies))
    sink, log = tmp_path / "sink.db", tmp_path / "consumer.log"
    args = [
        "nats",
        "--url", nats_url,
        "--stream", "ORDERS",
        "--durable", "workers",
        "--handler", "tests.consumer_handlers:record_effect",
        "--key-field", "order",
        "--server", str(service.base_url),
    ]  # fmt: skip

    def ambiguous() -> set[str]:
        letters = asyncio.run(_dead_letters(nats_url, "ORDERS"))
        return {str(d["key"]) for d in letters if d["class"] == "ambiguous"}

    proc = kill_repeatedly(args, sink, log, KILLS, seed=36)
    drain(proc, log, published, ambiguous, sink)
    counts = count(published, KILLS, sink, ambiguous())
    with capsys.disabled():
        print("\n" + counts.line("nats"))
    assert counts.duplicated == 0, counts
    assert counts.lost == 0, counts
    assert counts.ambiguous <= KILLS, counts
    letters = asyncio.run(_dead_letters(nats_url, "ORDERS"))
    assert {d["class"] for d in letters} <= {"ambiguous"}, letters
    assert all(d["call_id"] and d["error"] for d in letters)
    assert asyncio.run(_unacked(nats_url, "ORDERS")) == (0, 0)


def test_the_default_key_is_stream_and_sequence(nats_url: str, service: httpx.Client) -> None:
    asyncio.run(_publish(nats_url, "REVIEWS", [{"review": "r1"}, {"review": "r1"}], 30.0))
    calls: list[Message] = []

    def tag(message: Message) -> dict[str, object]:
        calls.append(message)
        return {"tags": ["ok"]}

    async def consume() -> None:
        broker = NatsJetStreamBroker(nats_url, "REVIEWS", "workers")
        td = AsyncTooldedup(str(service.base_url))
        settings = ConsumerSettings(tool="tag_review", poll_seconds=0.3)
        try:
            await ConsumerRunner(broker, td, tag, settings).run(until_idle=True)
        finally:
            await broker.close()
            await td.aclose()

    asyncio.run(consume())
    # Two messages, two sequences: the broker's identity keys them apart, same body or not.
    assert [m.key for m in calls] == ["nats:REVIEWS:1", "nats:REVIEWS:2"]
    assert asyncio.run(_unacked(nats_url, "REVIEWS")) == (0, 0)


def test_a_missing_stream_stops_the_command_with_a_reason(nats_url: str, tmp_path: Path) -> None:
    args = ["nats", "--url", nats_url, "--stream", "NOPE", "--durable", "workers"]
    args += ["--handler", "tests.consumer_handlers:record_effect"]
    ran = subprocess.run(
        [str(CONSUMER), *args],
        capture_output=True,
        text=True,
        timeout=60,
        env=consumer_env(tmp_path / "sink.db"),
    )
    assert ran.returncode == 1, ran.stderr
    assert "cannot consume: nats: no stream 'NOPE'; create it first" in ran.stderr


def test_a_broker_restart_loses_nothing(
    nats: NatsServer, service: httpx.Client, tmp_path: Path
) -> None:
    asyncio.run(_publish(nats.url, "RESTARTS", [{"order": i} for i in range(40)], ack_wait=2.0))
    sink, log = tmp_path / "sink.db", tmp_path / "consumer.log"
    args = [
        "nats",
        "--url", nats.url,
        "--stream", "RESTARTS",
        "--durable", "workers",
        "--handler", "tests.consumer_handlers:record_effect",
        "--key-field", "order",
        "--server", str(service.base_url),
    ]  # fmt: skip
    proc = start_consumer(args, sink, log)
    deadline = time.monotonic() + 20
    while not effects(sink) and time.monotonic() < deadline:
        time.sleep(0.02)
    nats.stop()
    time.sleep(1)
    nats.start()
    published = Published(frozenset(f"key:{i}" for i in range(40)), 40)
    drain(proc, log, published, lambda: set(), sink)
    keys = [key for key, _ in effects(sink)]
    assert sorted(keys) == sorted(published.keys)
    assert asyncio.run(_unacked(nats.url, "RESTARTS")) == (0, 0)
