"""`tooldedup-consumer redis-streams` against a real redis-server and a real tooldedup server:
the crash drill, replay, the token budget, a slow handler, a dead consumer's entries, and the
duplicate hook."""

from __future__ import annotations

import asyncio
import logging
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import redis
from tooldedup_client.consumer import (
    ConsumerMetrics,
    Message,
    field_key,
)

from tests.brokers import RedisServer, redis_server
from tests.consumer_crash import (
    TOOL,
    Published,
    count,
    drain,
    drill_server,
    kill_repeatedly,
    orders,
    start_consumer,
)
from tests.consumer_handlers import effects, record_effect
from tests.redis_consumer import (
    cli_args,
    dead_letters_of,
    make_runner,
    pending_count,
    publish_entries,
    run_until_idle,
    run_until_stopped,
)

pytestmark = pytest.mark.slow

KILLS = 8


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


def test_crash_drill(
    broker: RedisServer, service: httpx.Client, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bodies = orders(300, seed=34)
    publish_entries(broker.url, "orders", bodies)
    published = Published(frozenset(f"key:{b['order']}" for b in bodies), len(bodies))
    sink, log = tmp_path / "sink.db", tmp_path / "consumer.log"
    args = cli_args(broker.url, str(service.base_url), "orders", "--key-field", "order")

    def ambiguous() -> set[str]:
        letters = dead_letters_of(broker.url, "orders")
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
    letters = dead_letters_of(broker.url, "orders")
    assert {d["class"] for d in letters} <= {"ambiguous"}, letters
    assert all(d["call_id"] and d["error"] for d in letters)
    # Drained: nothing pending in the group.
    with redis.Redis.from_url(broker.url, decode_responses=True) as r:
        assert r.xpending("orders", "taggers")["pending"] == 0
    assert "stopped:" in log.read_text()


def test_replay_from_the_start_calls_no_handler(broker: RedisServer, service: httpx.Client) -> None:
    publish_entries(
        broker.url, "reviews", [{"review": f"r{i}", "text": f"review {i}"} for i in range(20)]
    )
    answers = iter(range(1000))

    def tag(message: Message) -> dict[str, object]:
        # A scripted model: another answer on every call.
        return {"tags": [f"tag-{next(answers)}"]}

    first, td = make_runner(broker.url, "reviews", str(service.base_url), tag)
    done = asyncio.run(run_until_idle(first, td))
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

    again, td = make_runner(
        broker.url, "reviews", str(service.base_url), calls.append, on_duplicate=rebuild
    )
    metrics = asyncio.run(run_until_idle(again, td))
    assert calls == []
    assert (metrics.handled, metrics.duplicates) == (0, 20)
    assert replayed == decided
    assert pending_count(broker.url, "reviews") == 0


def test_the_token_budget_pauses_and_resumes(
    broker: RedisServer, service: httpx.Client, caplog: pytest.LogCaptureFixture
) -> None:
    publish_entries(broker.url, "costly", [{"review": f"r{i}"} for i in range(6)])

    def tag(message: Message) -> dict[str, object]:
        message.use_tokens(40)
        return {"tags": ["ok"]}

    runner, td = make_runner(
        broker.url,
        "costly",
        str(service.base_url),
        tag,
        tokens_per_minute=100,
        budget_window_seconds=1.0,
    )
    with caplog.at_level(logging.INFO):
        metrics = asyncio.run(run_until_idle(runner, td))
    # Paused before the budget ran out (two messages of 40 fit in 100, a third does not)...
    assert metrics.paused_seconds > 0
    assert "token budget: 80 of 100 tokens used" in caplog.text
    # ...and resumed: every message handled, each counted once.
    assert (metrics.handled, metrics.tokens_used) == (6, 240)
    assert pending_count(broker.url, "costly") == 0


def test_a_slow_handler_is_not_taken_over(broker: RedisServer, service: httpx.Client) -> None:
    put = service.put("/v1/tools/slow_tag/policy", json={"lease_seconds": 1})
    assert put.status_code == 200
    publish_entries(broker.url, "slow", [{"review": "r1"}])
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
        first, td1 = make_runner(broker.url, "slow", base, slow, keepalive_seconds=0.2, **options)
        second, td2 = make_runner(broker.url, "slow", base, slow, consumer="c2", **options)
        task = asyncio.create_task(run_until_idle(first, td1))
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
    assert pending_count(broker.url, "slow") == 0


def test_a_dead_consumers_pending_entries_are_taken_over_after_an_idle_time(
    broker: RedisServer, service: httpx.Client, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bodies = [{"order": i} for i in range(30)]
    publish_entries(broker.url, "orphans", bodies)
    sink, log = tmp_path / "sink.db", tmp_path / "consumer.log"
    args = cli_args(broker.url, str(service.base_url), "orphans", "--key-field", "order")
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
        runner, td = make_runner(
            broker.url,
            "orphans",
            str(service.base_url),
            record_effect,
            consumer="c2",
            tool=TOOL,
            key=field_key(["order"]),
            claim_idle_seconds=1.0,
        )
        task = asyncio.create_task(run_until_stopped(runner, td))
        while True:
            ambiguous = {str(d["key"]) for d in dead_letters_of(broker.url, "orphans")}
            done = {key for key, _ in effects(sink)} | ambiguous
            if keys <= done and pending_count(broker.url, "orphans") == 0:
                break
            await asyncio.sleep(0.1)
        runner.stop()
        await task

    monkeypatch.setenv("CONSUMER_SINK", str(sink))
    asyncio.run(take_over())
    by_key = Counter(key for key, _ in effects(sink))
    assert max(by_key.values()) == 1
    letters = dead_letters_of(broker.url, "orphans")
    assert len(letters) <= 1  # only the message c1 was running when it died
    assert {d["class"] for d in letters} <= {"ambiguous"}


def test_a_failing_duplicate_hook_keeps_the_message_until_it_succeeds(
    broker: RedisServer, service: httpx.Client, caplog: pytest.LogCaptureFixture
) -> None:
    publish_entries(broker.url, "hooked", [{"review": "r1"}])
    first, td = make_runner(broker.url, "hooked", str(service.base_url), lambda m: {"tags": ["a"]})
    asyncio.run(run_until_idle(first, td))
    with redis.Redis.from_url(broker.url, decode_responses=True) as r:
        r.xgroup_setid("hooked", "taggers", "0")
    replays: list[object] = []

    def flaky(message: Message, stored: object) -> None:
        replays.append(stored)
        if len(replays) == 1:
            raise ConnectionError("the search index is down")

    again, td = make_runner(
        broker.url,
        "hooked",
        str(service.base_url),
        lambda m: pytest.fail("the handler must not run"),
        on_duplicate=flaky,
        in_progress_retry_seconds=0.1,
    )
    with caplog.at_level(logging.INFO):
        asyncio.run(run_until_idle(again, td))
    assert replays == [{"tags": ["a"]}, {"tags": ["a"]}]
    assert "the duplicate hook failed; left pending" in caplog.text
    assert pending_count(broker.url, "hooked") == 0
