"""Throughput of the tooldedup consumer against a bare consumer loop, on one Redis stream.

    .venv/bin/python -m benchmarks.consumer_throughput [--messages 500] [--runs 3] [--batch 10]

Starts Debian's redis-server and a `tooldedup serve` (SQLite) of its own on free ports. Each
run publishes ``--messages`` new entries to a fresh stream; the bare loop reads them with
XREADGROUP (``--batch`` at a time), calls the handler and XACKs each; the consumer runs the
same handler through ``ConsumerRunner`` (check, call, report, ack). The handler does nothing,
so the numbers are the cost of the loop itself: with an LLM call of a second or more in the
handler, both loops are as fast as the model. Runs alternate; the median of each is printed.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import redis
import redis.asyncio as aioredis
from tooldedup_client import AsyncTooldedup
from tooldedup_client.consumer import ConsumerRunner, ConsumerSettings, Message
from tooldedup_client.consumer.redis_streams import RedisStreamsBroker


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _wait(check: Any, what: str, seconds: float = 120) -> None:
    deadline = time.monotonic() + seconds
    while True:
        try:
            if check():
                return
        except (OSError, httpx.TransportError, redis.ConnectionError):
            pass
        if time.monotonic() > deadline:
            raise SystemExit(f"{what} did not start within {seconds} s")
        time.sleep(0.1)


@contextmanager
def _services(folder: Path) -> Iterator[tuple[str, str]]:
    """A redis-server and a tooldedup server; their URLs."""
    server = shutil.which("redis-server")
    if server is None:
        raise SystemExit("needs Debian's redis-server (make brokers)")
    redis_port, td_port = _free_port(), _free_port()
    serve = [sys.executable, "-m", "tooldedup.api.cli", "serve", "--db", str(folder / "l.db")]
    procs = [
        subprocess.Popen(
            [server, "--port", str(redis_port), "--save", "", "--dir", str(folder)],
            stdout=subprocess.DEVNULL,
        ),
        subprocess.Popen(
            [*serve, "--port", str(td_port), "--log-level", "warning"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.STDOUT,
        ),
    ]
    redis_url, td_url = f"redis://127.0.0.1:{redis_port}/0", f"http://127.0.0.1:{td_port}"
    try:
        _wait(lambda: redis.Redis.from_url(redis_url).ping(), "redis-server")
        _wait(lambda: httpx.get(f"{td_url}/healthz").status_code == 200, "tooldedup")
        yield redis_url, td_url
    finally:
        for proc in procs:
            proc.terminate()
            proc.wait()


def _publish(redis_url: str, stream: str, count: int) -> None:
    with redis.Redis.from_url(redis_url) as r:
        pipe = r.pipeline()
        for i in range(count):
            pipe.xadd(stream, {"order": str(i), "text": f"tag the review of order {i}"})
        pipe.execute()
        r.xgroup_create(stream, "g", id="0")


def _handler(message: Message) -> dict[str, str]:
    return {"tagged": str(message.body.get("order"))}


async def _bare(redis_url: str, stream: str, count: int, batch: int) -> float:
    """The loop teams write by hand: read, call, ack; no dedup."""
    r = aioredis.from_url(redis_url, decode_responses=True)
    started, done = time.perf_counter(), 0
    try:
        while done < count:
            read: Any = await r.xreadgroup("g", "bare", {stream: ">"}, count=batch, block=1000)
            for entry_id, fields in read[0][1] if read else []:
                _handler(Message(entry_id, entry_id, fields, {}))
                await r.xack(stream, "g", entry_id)
                done += 1
    finally:
        await r.aclose()
    return count / (time.perf_counter() - started)


async def _consumer(redis_url: str, td_url: str, stream: str, count: int, batch: int) -> float:
    """The same messages through ConsumerRunner: check, call, report, ack."""
    broker = RedisStreamsBroker(redis_url, stream, "g", "runner")
    settings = ConsumerSettings(tool="bench_tag", batch=batch, poll_seconds=0.2)
    async with AsyncTooldedup(td_url) as td:
        runner = ConsumerRunner(broker, td, _handler, settings)
        started = time.perf_counter()
        try:
            metrics = await runner.run(until_idle=True)
        finally:
            await broker.close()
        # The last, empty poll is not work: take it off.
        elapsed = time.perf_counter() - started - settings.poll_seconds
    if metrics.handled != count:
        raise SystemExit(f"the consumer handled {metrics.handled} of {count}")
    return count / elapsed


def main(argv: Sequence[str] | None = None) -> int:
    """Run the comparison and print messages per second, median of the runs."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--messages", type=int, default=500)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--batch", type=int, default=10)
    args = parser.parse_args(argv)
    bare: list[float] = []
    consumer: list[float] = []
    with tempfile.TemporaryDirectory() as folder, _services(Path(folder)) as (redis_url, td):
        for run in range(args.runs):
            _publish(redis_url, f"bare-{run}", args.messages)
            bare.append(asyncio.run(_bare(redis_url, f"bare-{run}", args.messages, args.batch)))
            _publish(redis_url, f"td-{run}", args.messages)
            consumer.append(
                asyncio.run(_consumer(redis_url, td, f"td-{run}", args.messages, args.batch))
            )
    b, c = statistics.median(bare), statistics.median(consumer)
    print(f"messages per run: {args.messages}, batch {args.batch}, runs {args.runs}")
    print(f"bare loop (XREADGROUP, handler, XACK): {b:8.0f} msg/s  runs {[round(x) for x in bare]}")
    print(f"tooldedup consumer (check, handler, report, ack): {c:8.0f} msg/s  runs "
          f"{[round(x) for x in consumer]}")  # fmt: skip
    print(f"consumer / bare: {c / b:.3f}; added per message: {1000 / c - 1000 / b:.2f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
