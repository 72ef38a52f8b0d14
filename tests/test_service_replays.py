"""Replays that arrive late, with a clock the test controls: the service on the real model."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from pathlib import Path

import pytest

from tooldedup.dedup.errors import IdempotencyKeyReused
from tooldedup.dedup.policy import PolicySet, policy_from_mapping
from tooldedup.dedup.protocols import Embedder, PairScorer
from tooldedup.dedup.records import DEFAULT_TENANT as T
from tooldedup.dedup.records import CallStatus, DecisionKind, Outcome, ToolCall
from tooldedup.dedup.service import ATTEMPT_REPEAT_SECONDS, DedupService
from tooldedup.index import Service, ServiceSettings, build_service
from tooldedup.index.word_vectors import WordVectors

START = 1_714_554_000.0  # 2024-05-01T09:00:00Z


class Clock:
    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def service(
    tmp_path: Path,
    embedder: Embedder,
    pair_scorer: PairScorer,
    word_vectors: WordVectors,
    clock: Clock,
) -> Iterator[DedupService]:
    built: Service = build_service(
        ServiceSettings(db_path=tmp_path / "ledger.db"),
        embedder=embedder,
        pair_scorer=pair_scorer,
        word_vectors=word_vectors,
        policies=PolicySet(),
        clock=clock,
    )
    yield built.service
    built.close()


def _stamp(seconds: float) -> str:
    return dt.datetime.fromtimestamp(seconds, dt.UTC).isoformat()


def test_a_byte_for_byte_replay_is_found_after_its_stamp_has_aged(
    service: DedupService, clock: Clock
) -> None:
    sent = {"to": "0xabc", "value": 1, "timestamp": _stamp(START)}
    first = service.check(ToolCall("s1", "wallet_send", sent))
    assert first.kind is DecisionKind.PROCEED
    assert first.call is not None
    service.complete(T, first.call.call_id, Outcome(CallStatus.SUCCEEDED, result="tx-1"))
    for later in (10.0, 210.0, 3000.0):
        clock.now = START + later
        again = service.check(ToolCall("s1", "wallet_send", dict(sent)))
        assert (again.kind, again.call_id) == (DecisionKind.DUPLICATE, first.call.call_id)
    # A fresh stamp of "now" is still the same transfer; another value is not.
    fresh = service.check(ToolCall("s1", "wallet_send", {**sent, "timestamp": _stamp(clock.now)}))
    assert fresh.kind is DecisionKind.DUPLICATE
    other = service.check(ToolCall("s1", "wallet_send", {**sent, "value": 2}))
    assert other.kind is DecisionKind.PROCEED


def test_a_key_replayed_after_its_stamp_has_aged_is_the_same_payload(
    service: DedupService, clock: Clock
) -> None:
    sent = {"to": "0xabc", "value": 1, "timestamp": _stamp(START)}
    first = service.check(ToolCall("s1", "wallet_send", sent, idempotency_key="k1"))
    assert first.kind is DecisionKind.PROCEED
    clock.now = START + 250.0  # past the stamp tolerance, inside the 300 s lease
    again = service.check(ToolCall("s1", "wallet_send", dict(sent), idempotency_key="k1"))
    assert again.kind is DecisionKind.IN_PROGRESS
    with pytest.raises(IdempotencyKeyReused):
        service.check(ToolCall("s1", "wallet_send", {**sent, "value": 5}, idempotency_key="k1"))


def test_a_key_replayed_in_another_step_is_another_payload(
    service: DedupService, clock: Clock
) -> None:
    sent = {"to": "0xabc", "value": 1}
    step3 = ToolCall("s1", "wallet_send", sent, run_id="r1", step="3", idempotency_key="k2")
    assert service.check(step3).kind is DecisionKind.PROCEED
    step4 = ToolCall("s1", "wallet_send", sent, run_id="r1", step="4", idempotency_key="k2")
    with pytest.raises(IdempotencyKeyReused):
        service.check(step4)


def test_a_byte_for_byte_replay_is_found_after_a_policy_change(service: DedupService) -> None:
    sent = {"to": "ana@example.com", "trace": "t-1", "body": "The invoice is attached."}
    first = service.check(ToolCall("s1", "send_email", sent))
    assert first.call is not None
    service.complete(T, first.call.call_id, Outcome(CallStatus.SUCCEEDED, result={"id": 1}))
    # The tool's policy now drops "trace": the same bytes canonicalise otherwise.
    policy = policy_from_mapping({"volatile_fields": ["trace"]}, service.policies.defaults)
    service.set_policy(T, "send_email", policy, {"volatile_fields": ["trace"]})
    replay = service.check(ToolCall("s1", "send_email", dict(sent)))
    assert replay.kind is DecisionKind.DUPLICATE
    assert replay.match is not None
    assert replay.match.call.call_id == first.call.call_id


def test_an_attempt_token_repeats_proceed_only_soon_after_the_claim(
    service: DedupService, clock: Clock
) -> None:
    call = ToolCall("s1", "transfer", {"to": "ACC-1", "amount": 5}, attempt_token="tok")
    first = service.check(call)
    assert first.kind is DecisionKind.PROCEED
    assert first.call is not None
    # A dry run with the token gets no replay of the claim.
    assert service.check(call, dry_run=True).kind is DecisionKind.IN_PROGRESS
    clock.now += 30
    again = service.check(call)
    assert again.kind is DecisionKind.PROCEED
    assert again.call is not None
    assert again.call.call_id == first.call.call_id
    # Long after the claim, the token may be a durable runtime's: the first run may be
    # going on still, so the answer is that it is.
    clock.now += ATTEMPT_REPEAT_SECONDS
    assert service.check(call).kind is DecisionKind.IN_PROGRESS
