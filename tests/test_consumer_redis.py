"""`tooldedup-consumer redis-streams` against a real redis-server and a real tooldedup server:
the crash drill, replay, the token budget, a slow handler, and bad input."""

from __future__ import annotations

import asyncio
import json
import logging
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
import redis
from tooldedup_client import AsyncTooldedup
from tooldedup_client.consumer import (
    Ambiguous,
    Classifier,
    ConsumerMetrics,
    ConsumerRunner,
    ConsumerSettings,
    Handler,
    Message,
    Poison,
    Route,
    field_key,
)
from tooldedup_client.consumer.redis_streams import RedisStreamsBroker

from tests.brokers import RedisServer, redis_server
from tests.consumer_crash import (
    CONSUMER,
    TOOL,
    Published,
    consumer_env,
    count,
    drain,
    kill_repeatedly,
    orders,
    start_consumer,
)
from tests.consumer_handlers import effects, record_effect
from tests.server import free_port, serve

pytestmark = pytest.mark.slow

KILLS = 8


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory, model_cache: Path) -> Iterator[httpx.Client]:
    """One tooldedup server for the module; the drill's tool has a 2 s lease, so a killed
    consumer's claim is reconciled soon."""
    with serve(tmp_path_factory.mktemp("td") / "ledger.db", model_cache) as client:
        put = client.put(f"/v1/tools/{TOOL}/policy", json={"lease_seconds": 2})
        assert put.status_code == 200, put.text
        yield client


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[RedisServer]:
    with redis_server(tmp_path / "redis") as server:
        yield server


def _publish(url: str, stream: str, bodies: list[dict[str, object]]) -> None:
    with redis.Redis.from_url(url, decode_responses=True) as r:
        for body in bodies:
            r.xadd(stream, {k: str(v) for k, v in body.items()})


def _dead_letters(url: str, stream: str) -> list[dict[str, object]]:
    with redis.Redis.from_url(url, decode_responses=True) as r:
        return [json.loads(fields["letter"]) for _, fields in r.xrange(f"{stream}:dead")]


def _args(url: str, server: str, stream: str, *extra: str) -> list[str]:
    return [
        "redis-streams",
        "--url", url,
        "--stream", stream,
        "--group", "taggers",
        "--consumer", "c1",
        "--handler", "tests.consumer_handlers:record_effect",
        "--server", server,
        *extra,
    ]  # fmt: skip


def test_crash_drill(
    broker: RedisServer, service: httpx.Client, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bodies = orders(300, seed=34)
    _publish(broker.url, "orders", bodies)
    published = Published(frozenset(f"key:{b['order']}" for b in bodies), len(bodies))
    sink, log = tmp_path / "sink.db", tmp_path / "consumer.log"
    args = _args(broker.url, str(service.base_url), "orders", "--key-field", "order")

    def ambiguous() -> set[str]:
        letters = _dead_letters(broker.url, "orders")
        return {str(d["key"]) for d in letters if d["class"] == "ambiguous"}

    proc = kill_repeatedly(args, sink, log, KILLS, seed=34)
    drain(proc, log, published, ambiguous, sink)
    counts = count(published, KILLS, sink, ambiguous())
    with capsys.disabled():
        print("\n" + counts.line("redis-streams"))
    assert counts.duplicated == 0, counts
    assert counts.lost == 0, counts
    assert counts.ambiguous <= KILLS, counts
    # Every dead letter names its call, class and error; nothing else was dead-lettered.
    letters = _dead_letters(broker.url, "orders")
    assert {d["class"] for d in letters} <= {"ambiguous"}, letters
    assert all(d["call_id"] and d["error"] for d in letters)
    # Drained: nothing pending in the group.
    with redis.Redis.from_url(broker.url, decode_responses=True) as r:
        assert r.xpending("orders", "taggers")["pending"] == 0
    assert "stopped:" in log.read_text()


def _runner(
    url: str,
    stream: str,
    server: str,
    handler: Handler,
    *,
    consumer: str = "c1",
    tool: str = "tag_review",
    **options: Any,
) -> tuple[ConsumerRunner, AsyncTooldedup]:
    """A runner in this process, on its own broker connection and client."""
    hooks = {k: options.pop(k) for k in ("key", "on_duplicate", "classifier") if k in options}
    claim_idle = options.pop("claim_idle_seconds", 30.0)
    broker = RedisStreamsBroker(url, stream, "taggers", consumer, claim_idle_seconds=claim_idle)
    td = AsyncTooldedup(server)
    settings = ConsumerSettings(tool=tool, poll_seconds=0.2, **options)
    return ConsumerRunner(broker, td, handler, settings, **hooks), td


async def _drain(runner: ConsumerRunner, td: AsyncTooldedup) -> ConsumerMetrics:
    try:
        return await runner.run(until_idle=True)
    finally:
        await runner.broker.close()
        await td.aclose()


def _pending(url: str, stream: str) -> int:
    with redis.Redis.from_url(url, decode_responses=True) as r:
        return int(r.xpending(stream, "taggers")["pending"])


def test_replay_from_the_start_calls_no_handler(broker: RedisServer, service: httpx.Client) -> None:
    _publish(broker.url, "reviews", [{"review": f"r{i}", "text": f"review {i}"} for i in range(20)])
    answers = iter(range(1000))

    def tag(message: Message) -> dict[str, object]:
        # A scripted model: another answer on every call.
        return {"tags": [f"tag-{next(answers)}"]}

    first, td = _runner(broker.url, "reviews", str(service.base_url), tag)
    done = asyncio.run(_drain(first, td))
    assert done.handled == 20
    decided = {
        call["args"]["review"]: call["result"]
        for call in service.get("/v1/sessions/reviews:taggers/calls").json()["calls"]
    }
    assert len(decided) == 20
    # Replay: the group reads the stream again from its first entry.
    with redis.Redis.from_url(broker.url, decode_responses=True) as r:
        r.xgroup_setid("reviews", "taggers", "0")
    replayed: dict[str, object] = {}
    calls: list[Message] = []

    def rebuild(message: Message, stored: object) -> None:
        replayed[message.body["review"]] = stored

    again, td = _runner(
        broker.url, "reviews", str(service.base_url), calls.append, on_duplicate=rebuild
    )
    metrics = asyncio.run(_drain(again, td))
    assert calls == []
    assert (metrics.handled, metrics.duplicates) == (0, 20)
    assert replayed == decided
    assert _pending(broker.url, "reviews") == 0


def test_the_token_budget_pauses_and_resumes(
    broker: RedisServer, service: httpx.Client, caplog: pytest.LogCaptureFixture
) -> None:
    _publish(broker.url, "costly", [{"review": f"r{i}"} for i in range(6)])

    def tag(message: Message) -> dict[str, object]:
        message.use_tokens(40)
        return {"tags": ["ok"]}

    runner, td = _runner(
        broker.url,
        "costly",
        str(service.base_url),
        tag,
        tokens_per_minute=100,
        budget_window_seconds=1.0,
    )
    with caplog.at_level(logging.INFO):
        metrics = asyncio.run(_drain(runner, td))
    # Paused before the budget ran out (two messages of 40 fit in 100, a third does not)...
    assert metrics.paused_seconds > 0
    assert "token budget: 80 of 100 tokens used" in caplog.text
    # ...and resumed: every message handled, each counted once.
    assert (metrics.handled, metrics.tokens_used) == (6, 240)
    assert _pending(broker.url, "costly") == 0


def test_a_slow_handler_is_not_taken_over(broker: RedisServer, service: httpx.Client) -> None:
    put = service.put("/v1/tools/slow_tag/policy", json={"lease_seconds": 1})
    assert put.status_code == 200
    _publish(broker.url, "slow", [{"review": "r1"}])
    calls: list[str] = []

    async def both() -> tuple[ConsumerMetrics, ConsumerMetrics, str]:
        started = asyncio.Event()
        loop = asyncio.get_running_loop()

        def slow(message: Message) -> dict[str, object]:
            calls.append(message.id)
            loop.call_soon_threadsafe(started.set)
            # Three leases long, and six times the second consumer's claim idle time.
            time.sleep(3)
            return {"tags": ["slow"]}

        options: dict[str, Any] = {"tool": "slow_tag", "claim_idle_seconds": 0.5}
        base = str(service.base_url)
        first, td1 = _runner(broker.url, "slow", base, slow, keepalive_seconds=0.2, **options)
        second, td2 = _runner(broker.url, "slow", base, slow, consumer="c2", **options)
        task = asyncio.create_task(_drain(first, td1))
        await started.wait()
        other = asyncio.create_task(second.run())
        done = await task
        second.stop()
        try:
            theirs = await other
        finally:
            await second.broker.close()
            await td2.aclose()
        return done, theirs, calls[0]

    done, theirs, _ = asyncio.run(both())
    assert calls == [calls[0]]
    assert (done.handled, theirs.handled) == (1, 0)
    [call] = service.get("/v1/sessions/slow:taggers/calls").json()["calls"]
    assert call["status"] == "succeeded"
    # The claim outlived its 1 s lease because its holder kept extending it.
    assert call["lease_expires_at"] > call["created_at"] + 2
    assert _pending(broker.url, "slow") == 0


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
    _publish(broker.url, "bad", [body])
    seen: list[str] = []

    def counted(message: Message) -> object:
        seen.append(message.id)
        return handler(message)

    options: dict[str, Any] = {"max_backoff_seconds": 0.1}
    if key_field is not None:
        options["key"] = field_key([key_field])
    runner, td = _runner(broker.url, "bad", str(service.base_url), counted, **options)
    with caplog.at_level(logging.INFO):
        metrics = asyncio.run(_drain(runner, td))
    assert len(seen) == calls
    assert log in caplog.text
    [letter] = _dead_letters(broker.url, "bad")
    assert (letter["class"], letter["route"]) == (failure, route)
    assert letter["body"] == body
    assert letter["error"]
    assert (letter["call_id"] is None) == (calls == 0)
    assert metrics.dead_letters == {failure: 1}
    assert _pending(broker.url, "bad") == 0


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
    _publish(broker.url, "triaged", [{"order": "9"}])
    runner, td = _runner(
        broker.url,
        "triaged",
        str(service.base_url),
        _raise_poison,
        classifier=classifier,
        classifier_timeout_seconds=0.3,
    )
    asyncio.run(_drain(runner, td))
    [letter] = _dead_letters(broker.url, "triaged")
    assert (letter["class"], letter["route"]) == ("poison", route)


def test_a_broker_restart_loses_nothing(
    broker: RedisServer, service: httpx.Client, tmp_path: Path
) -> None:
    bodies = [{"order": i} for i in range(40)]
    _publish(broker.url, "restarts", bodies)
    sink, log = tmp_path / "sink.db", tmp_path / "consumer.log"
    args = _args(broker.url, str(service.base_url), "restarts", "--key-field", "order")
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


@contextmanager
def _server_on(port: int, db: Path, cache: Path) -> Iterator[None]:
    """`tooldedup serve` on a port chosen beforehand, so it can come back on the same one."""
    command = [sys.executable, "-m", "tooldedup.api.cli", "serve", "--db", str(db)]
    command += ["--cache-dir", str(cache), "--port", str(port), "--log-level", "warning"]
    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 120
        while True:
            assert proc.poll() is None, "the server exited"
            try:
                if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, "the server did not start"
            time.sleep(0.2)
        yield
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_tooldedup_unreachable_waits_and_never_calls_without_a_claim(
    broker: RedisServer, tmp_path: Path, model_cache: Path, caplog: pytest.LogCaptureFixture
) -> None:
    port, db = free_port(), tmp_path / "ledger.db"
    calls: list[str] = []

    def tag(message: Message) -> dict[str, object]:
        calls.append(message.body["order"])
        return {"tags": ["ok"]}

    async def scenario() -> None:
        runner, td = _runner(broker.url, "outage", f"http://127.0.0.1:{port}", tag)
        task = asyncio.create_task(_drain_until_stopped(runner, td))
        with _server_on(port, db, model_cache):
            _publish(broker.url, "outage", [{"order": "1"}])
            while calls != ["1"]:
                await asyncio.sleep(0.05)
        # The server is down: the next message waits, unhandled, however long it takes.
        _publish(broker.url, "outage", [{"order": "2"}])
        while caplog.text.count("could not check with tooldedup") < 3:
            await asyncio.sleep(0.05)
        assert calls == ["1"]
        with _server_on(port, db, model_cache):
            while calls != ["1", "2"] or _pending(broker.url, "outage"):
                await asyncio.sleep(0.05)
        runner.stop()
        await task

    with caplog.at_level(logging.INFO):
        asyncio.run(scenario())
    assert calls == ["1", "2"]


async def _drain_until_stopped(runner: ConsumerRunner, td: AsyncTooldedup) -> None:
    try:
        await runner.run()
    finally:
        await runner.broker.close()
        await td.aclose()


def test_a_key_that_is_not_a_stream_stops_the_command_with_a_reason(
    broker: RedisServer, tmp_path: Path
) -> None:
    with redis.Redis.from_url(broker.url) as r:
        r.set("not-a-stream", "x")
    ran = subprocess.run(
        [str(CONSUMER), *_args(broker.url, "http://127.0.0.1:1", "not-a-stream")],
        capture_output=True,
        text=True,
        timeout=60,
        env=consumer_env(tmp_path / "sink.db"),
    )
    assert ran.returncode == 1, ran.stderr
    assert "cannot consume: redis: stream 'not-a-stream'" in ran.stderr
    assert "WRONGTYPE" in ran.stderr


def test_a_dead_consumers_pending_entries_are_taken_over_after_an_idle_time(
    broker: RedisServer, service: httpx.Client, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bodies = [{"order": i} for i in range(30)]
    _publish(broker.url, "orphans", bodies)
    sink, log = tmp_path / "sink.db", tmp_path / "consumer.log"
    args = _args(broker.url, str(service.base_url), "orphans", "--key-field", "order")
    # c1 dies with a batch fetched and unacked; it never comes back.
    proc = start_consumer(args, sink, log)
    while not effects(sink):
        assert proc.poll() is None, log.read_text()
        time.sleep(0.01)
    proc.kill()
    proc.wait()
    with redis.Redis.from_url(broker.url, decode_responses=True) as r:
        orphaned = r.xpending("orphans", "taggers")["consumers"]
    assert [c["name"] for c in orphaned] == ["c1"]
    keys = frozenset(f"key:{i}" for i in range(30))

    async def take_over() -> None:
        runner, td = _runner(
            broker.url,
            "orphans",
            str(service.base_url),
            record_effect,
            consumer="c2",
            tool=TOOL,
            key=field_key(["order"]),
            claim_idle_seconds=1.0,
        )
        task = asyncio.create_task(_drain_until_stopped(runner, td))
        while True:
            ambiguous = {str(d["key"]) for d in _dead_letters(broker.url, "orphans")}
            done = {key for key, _ in effects(sink)} | ambiguous
            if keys <= done and _pending(broker.url, "orphans") == 0:
                break
            await asyncio.sleep(0.1)
        runner.stop()
        await task

    monkeypatch.setenv("CONSUMER_SINK", str(sink))
    asyncio.run(take_over())
    by_key = Counter(key for key, _ in effects(sink))
    assert max(by_key.values()) == 1
    letters = _dead_letters(broker.url, "orphans")
    assert len(letters) <= 1  # only the message c1 was running when it died
    assert {d["class"] for d in letters} <= {"ambiguous"}


def test_a_read_tool_is_refused_at_start(
    broker: RedisServer, service: httpx.Client, tmp_path: Path
) -> None:
    # A read tool proceeds without a claim: a consumer behind it would dedup nothing.
    put = service.put("/v1/tools/lookup_only/policy", json={"side_effect": "read"})
    assert put.status_code == 200, put.text
    ran = subprocess.run(
        [
            str(CONSUMER),
            *_args(broker.url, str(service.base_url), "reads", "--tool", "lookup_only"),
        ],
        capture_output=True,
        text=True,
        timeout=60,
        env=consumer_env(tmp_path / "sink.db"),
    )
    assert ran.returncode == 1, ran.stderr
    assert "cannot consume: tool 'lookup_only' is a read tool in tooldedup" in ran.stderr


def test_a_failing_duplicate_hook_keeps_the_message_until_it_succeeds(
    broker: RedisServer, service: httpx.Client, caplog: pytest.LogCaptureFixture
) -> None:
    _publish(broker.url, "hooked", [{"review": "r1"}])
    first, td = _runner(broker.url, "hooked", str(service.base_url), lambda m: {"tags": ["a"]})
    asyncio.run(_drain(first, td))
    with redis.Redis.from_url(broker.url, decode_responses=True) as r:
        r.xgroup_setid("hooked", "taggers", "0")
    replays: list[object] = []

    def flaky(message: Message, stored: object) -> None:
        replays.append(stored)
        if len(replays) == 1:
            raise ConnectionError("the search index is down")

    again, td = _runner(
        broker.url,
        "hooked",
        str(service.base_url),
        lambda m: pytest.fail("the handler must not run"),
        on_duplicate=flaky,
        in_progress_retry_seconds=0.1,
    )
    with caplog.at_level(logging.INFO):
        asyncio.run(_drain(again, td))
    assert replays == [{"tags": ["a"]}, {"tags": ["a"]}]
    assert "the duplicate hook failed; left pending" in caplog.text
    assert _pending(broker.url, "hooked") == 0
