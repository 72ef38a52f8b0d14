"""Several server processes on one store, through HTTP: one proceed per intent, nothing lost.

Each backend runs the same races with two `serve --workers 2` (four processes) on one
PostgreSQL database or one SQLite file. Then a replica is killed with SIGKILL under load.
"""

from __future__ import annotations

import itertools
import os
import signal
import threading
import time
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.postgres import LocalPostgres
from tests.server import serve_processes

pytestmark = pytest.mark.slow

_CORES = [
    "the Q3 report is attached",
    "I have attached the Q3 report",
    "attached is the Q3 report",
    "please find the Q3 report attached",
]
# Forty rewordings of one message; checked one after another, every one after the first
# is a duplicate of whichever came first.
_ENDS = (".", "!", " .", "..", "", "!!", " !", "...", ". .", "!.")
PARAPHRASES = [f"Hi Bob, {core}{end}" for end in _ENDS for core in _CORES]


@pytest.fixture(scope="module", params=["postgres", "sqlite"])
def replicas(
    request: pytest.FixtureRequest,
    tmp_path_factory: pytest.TempPathFactory,
    model_cache: Path,
) -> Iterator[list[httpx.Client]]:
    """Two servers of two workers each on one store: four processes, started once per
    backend (about 10 s); the tests on them use sessions and tools of their own."""
    with ExitStack() as stack:
        if request.param == "postgres":
            postgres: LocalPostgres = request.getfixturevalue("postgres")
            store = postgres.create_database()
            stack.callback(postgres.drop_database, store)
        else:
            store = str(tmp_path_factory.mktemp("shared") / "shared.db")
        servers = serve_processes(store, model_cache, "--workers", "2", count=2)
        yield [client for client, _ in stack.enter_context(servers)]


def _wait_for(predicate: Any, what: str, seconds: float = 120.0) -> None:
    """Poll ``predicate`` (a hang guard, not a timing assertion)."""
    deadline = time.monotonic() + seconds
    while not predicate():
        assert time.monotonic() < deadline, f"never happened: {what}"
        time.sleep(0.05)


def _check(client: httpx.Client, session: str, body: str) -> dict[str, Any]:
    response = client.post(
        "/v1/check",
        json={
            "session_id": session,
            "tool": "send_email",
            "args": {"to": "bob@x.co", "body": body},
        },
    )
    assert response.status_code == 200, response.text
    answer: dict[str, Any] = response.json()
    return answer


def _race(replicas: list[httpx.Client], session: str, bodies: list[str]) -> Counter[str]:
    """Send every body at once, spread over the replicas; count the decisions."""
    start = threading.Barrier(len(bodies))

    def one(i: int) -> str:
        # A client per request: hundreds of threads on one connection pool is a test of
        # the HTTP client, not of the service.
        base = replicas[i % len(replicas)].base_url
        with httpx.Client(base_url=base, timeout=60) as client:
            start.wait()
            return str(_check(client, session, bodies[i])["decision"])

    with ThreadPoolExecutor(len(bodies)) as pool:
        return Counter(pool.map(one, range(len(bodies))))


def test_identical_checks_on_every_process_give_one_proceed(
    replicas: list[httpx.Client],
) -> None:
    decisions = _race(replicas, "same", ["Hi Bob, the Q3 report is attached."] * 200)
    assert decisions["proceed"] == 1
    assert decisions["in_progress"] == 199


def test_concurrent_paraphrases_give_one_proceed_per_round(replicas: list[httpx.Client]) -> None:
    for round_number in range(5):
        decisions = _race(replicas, f"round-{round_number}", PARAPHRASES)
        assert decisions == Counter({"proceed": 1, "in_progress": 39}), round_number


@pytest.mark.parametrize("backend", ["postgres", "sqlite"])
def test_sigkill_of_a_replica_loses_no_acknowledged_claim(
    backend: str, request: pytest.FixtureRequest, tmp_path: Path, model_cache: Path
) -> None:
    if backend == "postgres":
        store = request.getfixturevalue("postgres_url")
    else:
        store = str(tmp_path / "shared.db")
    acknowledged: list[tuple[str, str]] = []
    lock = threading.Lock()
    counter = itertools.count()
    with serve_processes(store, model_cache, count=2) as [(survivor, _), (victim, victim_process)]:
        stop = threading.Event()

        def load(client: httpx.Client) -> None:
            while not stop.is_set():
                n = next(counter)
                body = f"Invoice {n} for order {n * 7}: please pay by Friday."
                try:
                    answer = _check(client, f"load-{n % 5}", body)
                except httpx.TransportError:
                    return  # the victim died mid-request: that call was never acknowledged
                if answer["decision"] == "proceed":
                    with lock:
                        acknowledged.append((answer["call_id"], body))

        threads = [threading.Thread(target=load, args=(c,)) for c in (victim, victim) * 3]
        threads += [threading.Thread(target=load, args=(survivor,)) for _ in range(2)]
        for thread in threads:
            thread.start()
        try:
            _wait_for(lambda: len(acknowledged) >= 60, "claims acknowledged before the kill")
            os.kill(victim_process.pid, signal.SIGKILL)
            victim_process.wait()
            _wait_for(lambda: len(acknowledged) >= 90, "claims acknowledged after the kill")
        finally:
            stop.set()
            for thread in threads:
                thread.join()
        # Every call that was answered ``proceed`` is stored, whoever answered it.
        for call_id, body in acknowledged:
            stored = survivor.get(f"/v1/calls/{call_id}")
            assert stored.status_code == 200, call_id
            assert stored.json()["args"]["body"] == body
        # And the survivor goes on deciding against them.
        call_id, body = acknowledged[0]
        n = body.split()[1]
        again = _check(survivor, f"load-{int(n) % 5}", body)
        assert again["decision"] == "in_progress"
        assert again["match"]["call_id"] == call_id


def _model_calls(client: httpx.Client) -> float:
    for line in client.get("/metrics").text.splitlines():
        if line.startswith("tooldedup_model_calls "):
            return float(line.split()[1])
    raise AssertionError("no tooldedup_model_calls in /metrics")


def test_a_replica_never_embeds_what_another_embedded(postgres_url: str, model_cache: Path) -> None:
    with serve_processes(postgres_url, model_cache, count=2) as [(first, _), (second, _)]:
        text = "Reminder: the quarterly review moved to the large meeting room."
        before = _model_calls(first)
        assert _check(first, "one", text)["decision"] == "proceed"
        assert _model_calls(first) == before + 1
        # Another session on the other replica: a new claim, and no model call for it.
        before = _model_calls(second)
        assert _check(second, "two", text)["decision"] == "proceed"
        assert _model_calls(second) == before


def test_a_policy_set_through_one_replica_reaches_the_others(
    replicas: list[httpx.Client],
) -> None:
    first, second = replicas
    put = first.put("/v1/tools/pay_rent/policy", json={"side_effect": "irreversible"})
    assert put.status_code == 200

    def everywhere() -> bool:
        # Several answers in a row: the second server's two workers both know it.
        answers = [second.get("/v1/tools/pay_rent/policy").json() for _ in range(6)]
        return all(a["custom"] and a["policy"]["side_effect"] == "irreversible" for a in answers)

    deadline = time.monotonic() + 30  # a hang guard: workers refresh every 2 s
    while not everywhere():
        assert time.monotonic() < deadline, "the policy never reached the other replica"
        time.sleep(0.5)
