"""Helpers of the Redis consumer tests: publishing, reading dead letters, the command's
arguments, an in-process runner, and a tooldedup server on a port chosen beforehand."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import redis
from tooldedup_client import AsyncTooldedup
from tooldedup_client.consumer import ConsumerMetrics, ConsumerRunner, ConsumerSettings, Handler
from tooldedup_client.consumer.redis_streams import RedisStreamsBroker


def publish_entries(url: str, stream: str, bodies: list[dict[str, object]]) -> None:
    """XADD each body, its values as strings."""
    with redis.Redis.from_url(url, decode_responses=True) as r:
        for body in bodies:
            r.xadd(stream, {k: str(v) for k, v in body.items()})


def dead_letters_of(url: str, stream: str) -> list[dict[str, object]]:
    """The dead letters the consumer of ``stream`` wrote, oldest first."""
    with redis.Redis.from_url(url, decode_responses=True) as r:
        return [json.loads(fields["letter"]) for _, fields in r.xrange(f"{stream}:dead")]


def cli_args(url: str, server: str, stream: str, *extra: str) -> list[str]:
    """`tooldedup-consumer redis-streams` arguments for consumer c1 of group taggers."""
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


def make_runner(
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


async def run_until_idle(runner: ConsumerRunner, td: AsyncTooldedup) -> ConsumerMetrics:
    """Run until nothing is left, then close the runner's broker and client."""
    try:
        return await runner.run(until_idle=True)
    finally:
        await runner.broker.close()
        await td.aclose()


def pending_count(url: str, stream: str) -> int:
    """Entries of group taggers delivered and not acked."""
    with redis.Redis.from_url(url, decode_responses=True) as r:
        return int(r.xpending(stream, "taggers")["pending"])


@contextmanager
def tooldedup_on_port(port: int, db: Path, cache: Path) -> Iterator[None]:
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
        # Down is down: a server that does not finish its graceful stop in time is killed
        # (a client may hold a request open), as tests/server.py does.
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


async def run_until_stopped(runner: ConsumerRunner, td: AsyncTooldedup) -> None:
    """Run until stopped, then close the runner's broker and client."""
    try:
        await runner.run()
    finally:
        await runner.broker.close()
        await td.aclose()
