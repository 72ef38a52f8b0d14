"""The crash drill every broker's test runs: publish, SIGKILL the consumer at random points
while it works, restart it, let it drain, then count effects and dead letters."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx

from tests.consumer_handlers import effects
from tests.server import serve

ROOT = Path(__file__).resolve().parent.parent
CONSUMER = Path(sys.executable).parent / "tooldedup-consumer"
TOOL = "record_effect"


@dataclass(frozen=True)
class Published:
    """What the drill published: each logical key, and how many messages in all."""

    keys: frozenset[str]
    messages: int


@dataclass(frozen=True)
class CrashCounts:
    """What the drill counted."""

    messages: int
    keys: int
    kills: int
    effects: int
    duplicated: int
    ambiguous: int
    lost: int

    def line(self, broker: str) -> str:
        """One line for the test's output and the report."""
        return f"crash drill {broker}: " + json.dumps(self.__dict__, sort_keys=True)


@contextmanager
def drill_server(folder: Path, model_cache: Path) -> Iterator[httpx.Client]:
    """A tooldedup server whose drill tool has a 2 s lease, so a killed consumer's claim is
    reconciled soon."""
    with serve(folder / "ledger.db", model_cache) as client:
        put = client.put(f"/v1/tools/{TOOL}/policy", json={"lease_seconds": 2})
        assert put.status_code == 200, put.text
        yield client


def orders(count: int, seed: int) -> list[dict[str, object]]:
    """``count`` orders, a tenth of them published twice (the same body, a second message)."""
    rng = random.Random(seed)
    bodies: list[dict[str, object]] = [
        {"order": i, "text": f"tag the review of order {i}"} for i in range(count)
    ]
    twice = rng.sample(bodies, count // 10)
    published = bodies + twice
    rng.shuffle(published)
    return published


def consumer_env(sink: Path) -> dict[str, str]:
    """The environment of a consumer process: the tests' handlers importable, the sink named."""
    path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    return {**os.environ, "PYTHONPATH": path, "CONSUMER_SINK": str(sink)}


def start_consumer(args: list[str], sink: Path, log: Path) -> subprocess.Popen[bytes]:
    """``tooldedup-consumer ARGS`` as a real process, its log appended to ``log``."""
    with log.open("ab") as out:
        return subprocess.Popen(
            [str(CONSUMER), *args], env=consumer_env(sink), stdout=out, stderr=subprocess.STDOUT
        )


def kill_repeatedly(
    args: list[str], sink: Path, log: Path, kills: int, seed: int
) -> subprocess.Popen[bytes]:
    """Start the consumer, SIGKILL it ``kills`` times at random moments once it has started
    effecting, and return it started once more, to drain."""
    rng = random.Random(seed)
    for _ in range(kills):
        proc = start_consumer(args, sink, log)
        before = len(effects(sink))
        deadline = time.monotonic() + 20
        # Kill while it works: after at least one new effect, at a random moment.
        while len(effects(sink)) == before and time.monotonic() < deadline:
            if proc.poll() is not None:
                raise AssertionError(f"consumer exited: {log.read_text()[-3000:]}")
            time.sleep(0.02)
        time.sleep(rng.uniform(0.0, 0.6))
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    return start_consumer(args, sink, log)


def drain(
    proc: subprocess.Popen[bytes],
    log: Path,
    published: Published,
    ambiguous_keys: Callable[[], set[str]],
    sink: Path,
    timeout: float = 40,
) -> None:
    """Wait until every key is effected or dead-lettered as ambiguous, then stop gracefully."""
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                raise AssertionError(f"consumer exited: {log.read_text()[-3000:]}")
            done = {key for key, _ in effects(sink)} | ambiguous_keys()
            if published.keys <= done:
                break
            time.sleep(0.2)
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def count(published: Published, kills: int, sink: Path, ambiguous: set[str]) -> CrashCounts:
    """The drill's counts from the sink and the dead letters."""
    by_key = Counter(key for key, _ in effects(sink))
    effected = set(by_key)
    return CrashCounts(
        messages=published.messages,
        keys=len(published.keys),
        kills=kills,
        effects=sum(by_key.values()),
        duplicated=sum(1 for n in by_key.values() if n > 1),
        ambiguous=len(ambiguous),
        lost=len(published.keys - effected - ambiguous),
    )
