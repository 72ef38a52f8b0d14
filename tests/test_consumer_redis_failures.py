"""The Redis consumer on bad input and bad days: no key field, a body the handler cannot read, a
handler that raises, a classifier, tooldedup down, a broker restart, a broker or a tool that
refuses."""

from __future__ import annotations

import asyncio
import logging
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import redis
from tooldedup_client.consumer import (
    Ambiguous,
    Classifier,
    Handler,
    Message,
    Poison,
    Route,
    field_key,
)

from tests.brokers import RedisServer, redis_server
from tests.consumer_crash import (
    CONSUMER,
    Published,
    consumer_env,
    drain,
    drill_server,
    start_consumer,
)
from tests.consumer_handlers import effects
from tests.redis_consumer import (
    cli_args,
    dead_letters_of,
    make_runner,
    pending_count,
    publish_entries,
    run_until_idle,
    run_until_stopped,
    tooldedup_on_port,
)
from tests.server import free_port

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory, model_cache: Path) -> Iterator[httpx.Client]:
    """One tooldedup server for the module; the drill's tool has a 2 s lease, so a killed
    consumer's claim is reconciled soon."""
    with drill_server(tmp_path_factory.mktemp("td"), model_cache) as client:
        yield client


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[RedisServer]:
    with redis_server(tmp_path / "redis") as server:
        yield server


def _raise_runtime(message: Message) -> object:
    raise RuntimeError("provider answered 500")


def _expects_order(message: Message) -> object:
    return {"order": message.body["order"]}


def _raise_ambiguous(message: Message) -> object:
    raise Ambiguous("payment sent, confirmation timed out")


def _raise_poison(message: Message) -> object:
    raise Poison("the model invented a parameter")


@pytest.mark.parametrize(
    ("body", "handler", "key_field", "calls", "failure", "route", "log"),
    [
        ({"text": "no order"}, _expects_order, "order", 0, "poison", "human_review",
         "no key field 'order'"),
        ({"item": "x"}, _expects_order, None, 1, "poison", "human_review",
         "handler raised KeyError"),
        ({"order": "1"}, _raise_runtime, None, 3, "retryable", "reprocess",
         "retries exhausted"),
        ({"order": "2"}, _raise_ambiguous, None, 1, "ambiguous", "compensate",
         "handler raised Ambiguous"),
        ({"order": "3"}, _raise_poison, None, 1, "poison", "human_review",
         "handler raised Poison"),
    ],
)  # fmt: skip
def test_bad_input_is_dead_lettered_with_a_reason(
    broker: RedisServer,
    service: httpx.Client,
    caplog: pytest.LogCaptureFixture,
    body: dict[str, object],
    handler: Handler,
    key_field: str | None,
    calls: int,
    failure: str,
    route: str,
    log: str,
) -> None:
    publish_entries(broker.url, "bad", [body])
    seen: list[str] = []

    def counted(message: Message) -> object:
        seen.append(message.id)
        return handler(message)

    options: dict[str, Any] = {"max_backoff_seconds": 0.1}
    if key_field is not None:
        options["key"] = field_key([key_field])
    runner, td = make_runner(broker.url, "bad", str(service.base_url), counted, **options)
    with caplog.at_level(logging.INFO):
        metrics = asyncio.run(run_until_idle(runner, td))
    assert len(seen) == calls
    assert log in caplog.text
    [letter] = dead_letters_of(broker.url, "bad")
    assert (letter["class"], letter["route"]) == (failure, route)
    assert letter["body"] == body
    assert letter["error"]
    assert (letter["call_id"] is None) == (calls == 0)
    assert metrics.dead_letters == {failure: 1}
    assert pending_count(broker.url, "bad") == 0


@pytest.mark.parametrize(
    ("classifier", "route"),
    [
        (lambda letter: Route.COMPENSATE, "compensate"),
        (lambda letter: time.sleep(5), "human_review"),  # hangs past its hard timeout
        (lambda letter: 1 / 0, "human_review"),
        (lambda letter: "somewhere", "human_review"),
    ],
)
def test_a_classifier_routes_dead_letters_under_a_hard_timeout(
    broker: RedisServer, service: httpx.Client, classifier: Classifier, route: str
) -> None:
    publish_entries(broker.url, "triaged", [{"order": "9"}])
    runner, td = make_runner(
        broker.url,
        "triaged",
        str(service.base_url),
        _raise_poison,
        classifier=classifier,
        classifier_timeout_seconds=0.3,
    )
    asyncio.run(run_until_idle(runner, td))
    [letter] = dead_letters_of(broker.url, "triaged")
    assert (letter["class"], letter["route"]) == ("poison", route)


def test_a_broker_restart_loses_nothing(
    broker: RedisServer, service: httpx.Client, tmp_path: Path
) -> None:
    bodies = [{"order": i} for i in range(40)]
    publish_entries(broker.url, "restarts", bodies)
    sink, log = tmp_path / "sink.db", tmp_path / "consumer.log"
    args = cli_args(broker.url, str(service.base_url), "restarts", "--key-field", "order")
    proc = start_consumer(args, sink, log)
    deadline = time.monotonic() + 20
    while not effects(sink) and time.monotonic() < deadline:
        time.sleep(0.02)
    broker.stop()
    time.sleep(1)
    broker.start()
    published = Published(frozenset(f"key:{i}" for i in range(40)), 40)
    drain(proc, log, published, lambda: set(), sink)
    keys = [key for key, _ in effects(sink)]
    assert sorted(keys) == sorted(published.keys)
    assert "could not" in log.read_text()
    assert "redis" in log.read_text()


def test_tooldedup_unreachable_waits_and_never_calls_without_a_claim(
    broker: RedisServer, tmp_path: Path, model_cache: Path, caplog: pytest.LogCaptureFixture
) -> None:
    port, db = free_port(), tmp_path / "ledger.db"
    calls: list[str] = []

    def tag(message: Message) -> dict[str, object]:
        calls.append(message.body["order"])
        return {"tags": ["ok"]}

    async def scenario() -> None:
        runner, td = make_runner(broker.url, "outage", f"http://127.0.0.1:{port}", tag)
        task = asyncio.create_task(run_until_stopped(runner, td))
        with tooldedup_on_port(port, db, model_cache):
            publish_entries(broker.url, "outage", [{"order": "1"}])
            # Finished, not only called: its report must reach the server before it stops.
            while calls != ["1"] or pending_count(broker.url, "outage"):
                await asyncio.sleep(0.05)
        # The server is down: the next message waits, unhandled, however long it takes.
        publish_entries(broker.url, "outage", [{"order": "2"}])
        while caplog.text.count("could not check with tooldedup") < 3:
            await asyncio.sleep(0.05)
        assert calls == ["1"]
        with tooldedup_on_port(port, db, model_cache):
            while calls != ["1", "2"] or pending_count(broker.url, "outage"):
                await asyncio.sleep(0.05)
        runner.stop()
        await task

    with caplog.at_level(logging.INFO):
        asyncio.run(scenario())
    assert calls == ["1", "2"]


def test_a_key_that_is_not_a_stream_stops_the_command_with_a_reason(
    broker: RedisServer, tmp_path: Path
) -> None:
    with redis.Redis.from_url(broker.url) as r:
        r.set("not-a-stream", "x")
    ran = subprocess.run(
        [str(CONSUMER), *cli_args(broker.url, "http://127.0.0.1:1", "not-a-stream")],
        capture_output=True,
        text=True,
        timeout=60,
        env=consumer_env(tmp_path / "sink.db"),
    )
    assert ran.returncode == 1, ran.stderr
    assert "cannot consume: redis: stream 'not-a-stream'" in ran.stderr
    assert "WRONGTYPE" in ran.stderr


def test_a_read_tool_is_refused_at_start(
    broker: RedisServer, service: httpx.Client, tmp_path: Path
) -> None:
    # A read tool proceeds without a claim: a consumer behind it would dedup nothing.
    put = service.put("/v1/tools/lookup_only/policy", json={"side_effect": "read"})
    assert put.status_code == 200, put.text
    ran = subprocess.run(
        [
            str(CONSUMER),
            *cli_args(broker.url, str(service.base_url), "reads", "--tool", "lookup_only"),
        ],
        capture_output=True,
        text=True,
        timeout=60,
        env=consumer_env(tmp_path / "sink.db"),
    )
    assert ran.returncode == 1, ran.stderr
    assert "cannot consume: tool 'lookup_only' is a read tool in tooldedup" in ran.stderr
