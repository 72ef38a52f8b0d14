"""Races and fairness against a real `tooldedup serve` process."""

from __future__ import annotations

import random
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx

from tests.server import serve

WORDS = (
    "garden morning letter window quiet river yellow market bridge winter summer kitchen "
    "lantern meadow harbour pencil orchard forest candle blanket ladder mirror basket "
    "village valley cottage journey station theatre library painting country mountain"
).split()


def _prose(rng: random.Random, chars: int) -> str:
    words: list[str] = []
    while sum(len(w) + 1 for w in words) < chars:
        words.append(rng.choice(WORDS))
    return " ".join(words)[:chars].rsplit(" ", 1)[0]


def test_one_key_across_two_tools_is_refused_under_any_race(
    tmp_path: Path, model_cache: Path
) -> None:
    with serve(tmp_path / "ledger.db", model_cache) as client:
        for trial in range(8):
            barrier = threading.Barrier(20)

            def attempt(i: int, trial: int = trial, barrier: threading.Barrier = barrier) -> Any:
                tool = "charge" if i % 2 else "refund"
                body = {
                    "session_id": f"race-{trial}",
                    "tool": tool,
                    "args": {"amount": 5},
                    "idempotency_key": f"key-{trial}",
                }
                barrier.wait()
                response = client.post("/v1/check", json=body)
                return tool, response.status_code, response.json()

            with ThreadPoolExecutor(20) as pool:
                answers = list(pool.map(attempt, range(20)))
            accepted = {tool for tool, status, _ in answers if status == 200}
            assert len(accepted) == 1, answers
            for tool, status, body in answers:
                if tool in accepted:
                    assert body["decision"] in ("proceed", "in_progress"), body
                    assert body["match"] is None or body["match"]["tool"] == tool
                else:
                    assert status == 422
                    assert body["error"]["code"] == "idempotency_key_reused"
            decisions = [body["decision"] for _, status, body in answers if status == 200]
            assert decisions.count("proceed") == 1


def test_a_heavy_session_never_holds_up_another(tmp_path: Path, model_cache: Path) -> None:
    rng = random.Random(7)
    with serve(tmp_path / "ledger.db", model_cache) as client:
        budget = {"max_text_leaves": 256, "max_text_chars": 200_000}
        assert client.put("/v1/tools/log/policy", json=budget).status_code == 200
        # Within the tool's budget: 256 new free-text leaves of ~780 characters.
        heavy = {"notes": [_prose(rng, 780) for _ in range(256)]}
        small = [{"to": "a@example.com", "body": _prose(rng, 60)} for _ in range(45)]
        a_answered = 0
        a_lock = threading.Lock()
        events: list[tuple[str, int]] = []

        def session_a(args: dict[str, Any], tool: str = "log") -> int:
            nonlocal a_answered
            body = {"session_id": "heavy", "tool": tool, "args": args}
            status = client.post("/v1/check", json=body, timeout=120).status_code
            with a_lock:
                a_answered += 1
            return status

        def in_progress() -> float:
            text = client.get("/metrics").text
            line = next(x for x in text.splitlines() if x.startswith("tooldedup_checks_in_"))
            return float(line.split()[-1])

        with ThreadPoolExecutor(len(small) + 1) as pool:
            first = pool.submit(session_a, heavy)
            while in_progress() < 1:
                pass
            # Spread over many tool names: the session, not the tool, is what queues.
            rest = [pool.submit(session_a, args, f"tool-{i}") for i, args in enumerate(small)]
            # The whole burst of session A is in the service before session B asks anything.
            while in_progress() < 1 + len(small) and not first.done():
                pass
            for _ in range(5):
                body = {"session_id": "light", "tool": "log", "args": {"note": _prose(rng, 80)}}
                answer = client.post("/v1/check", json=body)
                assert answer.status_code == 200
                assert answer.json()["decision"] == "proceed"
                with a_lock:
                    events.append(("check", a_answered))
                assert client.get("/healthz").status_code == 200
                with a_lock:
                    events.append(("healthz", a_answered))
            statuses = [first.result(), *(f.result() for f in rest)]
        assert statuses == [200] * (1 + len(small))
        # Every answer to session B, and every /healthz, came before session A's first answer:
        # while its heavy check was still running.
        assert events == [(kind, 0) for kind in ("check", "healthz") * 5]


def test_metrics_count_checks_in_progress(tmp_path: Path, model_cache: Path) -> None:
    with serve(tmp_path / "ledger.db", model_cache) as client:
        text = client.get("/metrics").text
        assert "tooldedup_checks_in_progress 0.0" in text
        body = {"session_id": "s", "tool": "t", "args": {"x": 1}}
        assert client.post("/v1/check", json=body).status_code == 200
        assert "tooldedup_checks_in_progress 0.0" in httpx.get(f"{client.base_url}/metrics").text
