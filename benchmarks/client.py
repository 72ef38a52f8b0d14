"""A lean keep-alive HTTP/1.1 load client on asyncio streams, for loopback servers only.

It adds tens of microseconds per request on the shared two cores, where httpx would add
hundreds, so the latency it records is the server's plus the loopback.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = ["RunResult", "run_load"]


@dataclass
class RunResult:
    """Latencies (seconds) and answers of one bounded run."""

    latencies: list[float] = field(default_factory=list)
    payloads: list[bytes] = field(default_factory=list)
    errors: int = 0
    wall_seconds: float = 0.0

    @property
    def answers(self) -> list[dict[str, Any]]:
        """The JSON answers of the successful requests (parsed after the run, not during it)."""
        return [json.loads(p) for p in self.payloads]

    @property
    def throughput(self) -> float:
        """Completed requests per second of wall time."""
        return len(self.latencies) / self.wall_seconds if self.wall_seconds else 0.0


def _request(host: str, port: int, path: str, body: bytes) -> bytes:
    head = (
        f"POST {path} HTTP/1.1\r\nHost: {host}:{port}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    )
    return head.encode() + body


async def _read_response(reader: asyncio.StreamReader) -> tuple[int, bytes]:
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split(" ", 2)[1])
    length = 0
    for line in lines[1:]:
        name, _, value = line.partition(":")
        if name.strip().lower() == "content-length":
            length = int(value)
    return status, await reader.readexactly(length)


async def _worker(
    host: str,
    port: int,
    path: str,
    take: Callable[[], bytes | None],
    result: RunResult,
    deadline: float,
) -> None:
    reader, writer = await asyncio.open_connection(host, port)
    try:
        while time.perf_counter() < deadline:
            body = take()
            if body is None:
                return
            started = time.perf_counter()
            writer.write(_request(host, port, path, body))
            status, payload = await _read_response(reader)
            result.latencies.append(time.perf_counter() - started)
            if status != 200:
                result.errors += 1
                continue
            result.payloads.append(payload)
    finally:
        writer.close()
        await writer.wait_closed()


async def _run(
    port: int, path: str, bodies: Sequence[bytes], concurrency: int, max_seconds: float
) -> RunResult:
    result = RunResult()
    items = iter(bodies)

    def take() -> bytes | None:
        return next(items, None)

    started = time.perf_counter()
    deadline = started + max_seconds
    workers = [_worker("127.0.0.1", port, path, take, result, deadline) for _ in range(concurrency)]
    await asyncio.gather(*workers)
    result.wall_seconds = time.perf_counter() - started
    return result


def run_load(
    port: int,
    bodies: Sequence[dict[str, Any]],
    concurrency: int,
    *,
    path: str = "/v1/check",
    max_seconds: float = 30.0,
) -> RunResult:
    """POST each body once to 127.0.0.1:``port`` over ``concurrency`` keep-alive connections.

    Stops when the bodies run out or ``max_seconds`` have passed, whichever comes first.
    """
    encoded = [json.dumps(b, separators=(",", ":")).encode() for b in bodies]
    return asyncio.run(_run(port, path, encoded, concurrency, max_seconds))
