"""PostgreSQL going away under load, and a pool with no free connection, through HTTP."""

from __future__ import annotations

import itertools
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest

from tests.postgres import LocalPostgres
from tests.server import serve
from tooldedup.dedup.canonical import canonical_json

pytestmark = pytest.mark.slow


@pytest.fixture
def own_postgres() -> Iterator[LocalPostgres]:
    """A server of this test's own, to stop and start."""
    server = LocalPostgres()
    yield server
    server.close()


def _check(client: httpx.Client, session: str, n: int) -> httpx.Response:
    args = {"to": "ana@x.co", "body": f"Shipment {n} left the warehouse today."}
    return client.post("/v1/check", json={"session_id": session, "tool": "notify", "args": args})


def _until(predicate: Any, what: str, seconds: float = 60.0) -> None:
    """Poll ``predicate`` (a hang guard, not a timing assertion)."""
    deadline = time.monotonic() + seconds
    while not predicate():
        if time.monotonic() > deadline:
            pytest.fail(f"never happened: {what}")
        time.sleep(0.2)


def test_database_down_gives_503_json_then_recovers(
    own_postgres: LocalPostgres, model_cache: Path
) -> None:
    url = own_postgres.create_database()
    statuses: list[int] = []
    bodies: list[dict[str, Any]] = []
    lock = threading.Lock()
    numbers = itertools.count()
    with serve(url, model_cache, "--db-timeout", "1") as client:
        stop = threading.Event()

        def load() -> None:
            while not stop.is_set():
                response = _check(client, "load", next(numbers))
                with lock:
                    statuses.append(response.status_code)
                    bodies.append(response.json())

        threads = [threading.Thread(target=load) for _ in range(4)]
        for thread in threads:
            thread.start()
        try:
            _until(lambda: len(statuses) > 20, "checks answered before the outage")
            own_postgres.stop("immediate")
            with lock:
                before = len(statuses)
            _until(lambda: statuses[before:].count(503) >= 8, "503 answers during the outage")
            down = "/healthz says the store is down"
            _until(lambda: client.get("/healthz").status_code == 503, down)
            assert client.get("/healthz").json()["store"] == "down"
            own_postgres.start()
            back = "/healthz sees the store back"
            _until(lambda: client.get("/healthz").status_code == 200, back)
            with lock:
                after = len(statuses)
            _until(lambda: statuses[after:].count(200) >= 10, "checks answered again")
        finally:
            stop.set()
            for thread in threads:
                thread.join()
    assert set(statuses) <= {200, 503}
    for status, body in zip(statuses, bodies, strict=True):
        if status == 503:
            assert body["error"]["code"] == "store_unavailable"
            assert body["error"]["message"]
        else:
            assert body["decision"] == "proceed"


def test_pool_exhaustion_answers_503(postgres: LocalPostgres, model_cache: Path) -> None:
    url = postgres.create_database()
    with serve(url, model_cache, "--db-pool-size", "1", "--db-timeout", "1") as client:
        # Warm the one pooled connection and the embedding of the text we send first.
        assert _check(client, "blocked", 0).status_code == 200
        # Hold the lock that checks of (session "blocked", tool "notify") wait on: the
        # next such check takes the only pooled connection and waits with it.
        holder = psycopg.connect(url, autocommit=True)
        key = canonical_json(["default", "blocked", "notify"])
        holder.execute("SELECT pg_advisory_lock(hashtextextended(%s, 0))", (key,))
        with ThreadPoolExecutor(1) as pool:
            waiting = pool.submit(_check, client, "blocked", 1)
            _until(lambda: _waiting_on_lock(holder), "a check waiting on the advisory lock")
            starved = _check(client, "other", 2)
            assert starved.status_code == 503
            assert starved.json()["error"]["code"] == "store_unavailable"
            assert starved.headers["Retry-After"] == "1"
            holder.execute("SELECT pg_advisory_unlock(hashtextextended(%s, 0))", (key,))
            assert waiting.result().status_code == 200
        holder.close()
        # Nothing stuck: the session that was refused is served now.
        assert _check(client, "other", 2).json()["decision"] == "proceed"


def _waiting_on_lock(conn: psycopg.Connection[Any]) -> bool:
    row = conn.execute(
        "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted"
    ).fetchone()
    return row is not None and row[0] > 0


@pytest.mark.parametrize("workers", ["1", "2"])
def test_an_unreachable_database_stops_the_start(tmp_path: Path, workers: str) -> None:
    url = f"postgresql://postgres@/x?host={tmp_path}"  # no server listens there
    command = [sys.executable, "-m", "tooldedup.api.cli", "serve", "--db", url]
    done = subprocess.run(
        [*command, "--workers", workers, "--db-timeout", "0.5", "--port", "9"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2
    assert "PostgreSQL did not answer" in done.stderr
