"""Where a check runs: on the event loop's thread when alone and local, else in the pool."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient

from tests.helpers import MakeApp
from tooldedup.api.dispatch import (
    INLINE_MAX_CHARS,
    INLINE_MAX_NODES,
    INLINE_MAX_STRINGS,
    CheckDispatcher,
    is_light,
)
from tooldedup.api.settings import Settings


def _on_loop() -> bool:
    """Whether the caller runs on a thread with a running event loop (not a pool thread)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


def _app(dispatcher: CheckDispatcher, times: int, work: Any = _on_loop) -> Any:
    arrived: list[int] = []
    together = asyncio.Event()

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        # Every request is in flight before any is dispatched, however the client schedules.
        arrived.append(1)
        if len(arrived) == times:
            together.set()
        await together.wait()
        try:
            body = json.dumps({"on_loop": await dispatcher.run(True, work)}).encode()
            status = 200
        except ValueError as exc:
            body, status = json.dumps({"error": str(exc)}).encode(), 422
        await send({"type": "http.response.start", "status": status, "headers": []})
        await send({"type": "http.response.body", "body": body})

    return dispatcher.counting(app)


async def _get(dispatcher: CheckDispatcher, times: int, work: Any = _on_loop) -> list[Any]:
    transport = httpx.ASGITransport(app=_app(dispatcher, times, work))
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
        answers = await asyncio.gather(*(client.get("/") for _ in range(times)))
    return [(a.status_code, a.json()) for a in answers]


@pytest.mark.parametrize(
    ("inline", "times", "on_loop"),
    [
        (True, 1, True),  # alone and local: no hop to a thread
        (True, 3, False),  # requests in flight together overlap in the pool
        (False, 1, False),  # a service that may wait on the network never holds the loop
        (False, 3, False),
    ],
)
def test_a_check_runs_on_the_loop_only_when_alone_and_local(
    inline: bool, times: int, on_loop: bool
) -> None:
    dispatcher = CheckDispatcher(inline=inline)
    answers = asyncio.run(_get(dispatcher, times))
    assert answers == [(200, {"on_loop": on_loop})] * times
    assert dispatcher.requests == 0


@pytest.mark.parametrize("inline", [True, False])
def test_an_error_reaches_the_caller_either_way(inline: bool) -> None:
    def fails() -> None:
        raise ValueError("bad input")

    dispatcher = CheckDispatcher(inline=inline)
    answers = asyncio.run(_get(dispatcher, 1, fails))
    assert answers == [(422, {"error": "bad input"})]
    assert dispatcher.requests == 0


@pytest.mark.parametrize(
    ("args", "light"),
    [
        ({"to": "a@b.co", "body": "Send the report today"}, True),
        ({"notes": ["a b"] * INLINE_MAX_STRINGS, "n": [1] * 40}, True),
        ({"notes": ["a b"] * (INLINE_MAX_STRINGS + 1)}, False),  # texts the model may read
        ({"deep": [{"x": ["a b", {"y": "c d"}]}] * 4}, False),  # found at any depth
        ({"ids": ["x"] * 500}, False),  # a policy may name any field free text
        ({"n": list(range(INLINE_MAX_NODES + 1))}, False),  # many values to canonicalise
        ({f"k{i}": 1 for i in range(INLINE_MAX_NODES + 1)}, False),
        ({"k" * (INLINE_MAX_CHARS + 1): 1}, False),  # long keys
        ({"body": "word " * (INLINE_MAX_CHARS // 5 + 1)}, False),  # one long text, windows
        ({}, True),
    ],
)
def test_a_light_check_is_a_few_short_values(args: Any, light: bool) -> None:
    assert is_light(args) is light


class _Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_a_slow_check_on_the_loop_sends_checks_to_the_pool_for_a_while() -> None:
    clock = _Clock()
    dispatcher = CheckDispatcher(inline=True, slow_seconds=0.05, pause_seconds=60, clock=clock)

    def slow() -> bool:
        clock.now += 0.2  # a group loaded again, a lock another process held
        return _on_loop()

    assert asyncio.run(_get(dispatcher, 1, slow)) == [(200, {"on_loop": True})]
    assert asyncio.run(_get(dispatcher, 1)) == [(200, {"on_loop": False})]
    clock.now += 61
    assert asyncio.run(_get(dispatcher, 1)) == [(200, {"on_loop": True})]


def test_no_check_runs_on_the_loop_while_maintenance_writes() -> None:
    dispatcher = CheckDispatcher(inline=True)
    with dispatcher.held_off():
        assert dispatcher.holding
        assert asyncio.run(_get(dispatcher, 1)) == [(200, {"on_loop": False})]
    assert not dispatcher.holding
    assert asyncio.run(_get(dispatcher, 1)) == [(200, {"on_loop": True})]


@pytest.mark.parametrize(
    ("slow_seconds", "pause_seconds"), [(-1, 60), (0.05, -0.1), (True, 60), ("1", 60)]
)
def test_the_pause_bounds_are_checked(slow_seconds: Any, pause_seconds: Any) -> None:
    with pytest.raises(ValueError, match="seconds"):
        CheckDispatcher(inline=True, slow_seconds=slow_seconds, pause_seconds=pause_seconds)


@pytest.mark.parametrize(
    ("extra", "inline"),
    [
        ({}, True),
        ({"judge_base_url": "http://127.0.0.1:9/v1", "judge_model": "m"}, False),
    ],
)
def test_checks_through_http_run_where_the_service_allows(
    tmp_path: Path, make_app: MakeApp, extra: dict[str, Any], inline: bool
) -> None:
    # One maintenance round, at startup, and none during the test: while maintenance
    # writes, every check runs in the pool.
    hours = {f"{name}_interval_seconds": 3600.0 for name in ("checkpoint", "refresh", "purge")}
    settings = Settings(db_path=tmp_path / "d.db", **hours, **extra)
    app = make_app(settings)
    service = app.state.service
    seen: list[bool] = []
    check = service.check
    maintain = service.maintain
    maintained = threading.Event()

    def maintained_once() -> None:
        maintain()
        maintained.set()

    service.maintain = maintained_once

    def recorded(*args: Any, **kwargs: Any) -> Any:
        seen.append(_on_loop())
        return check(*args, **kwargs)

    service.check = recorded
    body = {"session_id": "s", "tool": "send_email", "args": {"to": "a@b.co", "body": "hi"}}
    heavy = {**body, "args": {"notes": [f"note number {i}" for i in range(INLINE_MAX_STRINGS + 1)]}}
    paired = {**body, "tool": "wire_money"}
    with TestClient(app) as client:
        assert maintained.wait(60)
        while app.state.dispatcher.holding:  # the round's last step is leaving ``held_off``
            time.sleep(0.001)
        first = client.post("/v1/check", json=body)
        again = client.post("/v1/check", json=body)
        many = client.post("/v1/check", json=heavy)
        policy = client.put("/v1/tools/wire_money/policy", json={"pair_model": True})
        read_by_pairs = client.post("/v1/check", json=paired)
    assert first.status_code == 200
    assert first.json()["decision"] == "proceed"
    assert again.json()["decision"] == "in_progress"
    assert many.json()["decision"] == "proceed"
    assert policy.status_code == 200
    assert read_by_pairs.json()["decision"] == "proceed"
    assert app.state.dispatcher.inline is inline
    # A check of many strings, or of a tool the pair model reads, runs in the pool.
    assert seen == [inline, inline, False, False]
