"""The service and its funnel on the real model, faiss and SQLite."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tooldedup.dedup.canonical import stable_hash
from tooldedup.dedup.errors import NotFound
from tooldedup.dedup.ledger import SqliteLedger
from tooldedup.dedup.policy import BorderlineAction, CompareMode, PolicySet, ToolPolicy
from tooldedup.dedup.protocols import Embedder, PairScorer
from tooldedup.dedup.records import DEFAULT_TENANT as T
from tooldedup.dedup.records import CallStatus, DecisionKind, FailureClass, Outcome, Stage, ToolCall
from tooldedup.dedup.service import DedupService
from tooldedup.index import CachedEmbedder, Service, ServiceSettings, build_service
from tooldedup.index.word_vectors import WordVectors

BODY = "Hi Bob, the Q3 report is attached. Let me know if you have any questions."
REWORDED = "Hello Bob, I have attached the Q3 report. Tell me if anything is unclear."


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


Build = Callable[..., tuple[DedupService, CachedEmbedder]]


@pytest.fixture
def build(
    tmp_path: Path, embedder: Embedder, pair_scorer: PairScorer, word_vectors: WordVectors
) -> Iterator[Build]:
    built: list[Service] = []

    def make(policy: ToolPolicy | None = None, clock: Clock | None = None):  # type: ignore[no-untyped-def]
        service = build_service(
            ServiceSettings(db_path=tmp_path / "ledger.db"),
            embedder=embedder,
            pair_scorer=pair_scorer,
            word_vectors=word_vectors,
            policies=PolicySet(policy or ToolPolicy()),
            clock=clock or Clock(),
        )
        built.append(service)
        return service.service, service.embedder

    yield make
    for service in built:
        service.close()


def _call(**args: object) -> ToolCall:
    return ToolCall("s1", "send_email", {"to": "bob@example.com", **args})


def _succeed(service: DedupService, call_id: str | None) -> None:
    assert call_id is not None
    service.complete(T, call_id, Outcome(CallStatus.SUCCEEDED, result="ok"))


def test_at_most_one_model_call_per_proposal(build: Build) -> None:
    service, cached = build()
    first = service.check(_call(subject="Q3 report", body=BODY))
    assert cached.model_calls == 1  # embedded at claim time
    _succeed(service, first.call_id)
    again = service.check(_call(subject="The Q3 report", body=REWORDED))
    assert again.kind is DecisionKind.DUPLICATE
    assert again.match is not None
    assert again.match.stage is Stage.SEMANTIC
    assert cached.model_calls == 2  # both leaves of the proposal in one call
    exact = service.check(_call(subject="Q3 report", body=BODY, request_id="x"))
    assert exact.kind is DecisionKind.DUPLICATE
    assert cached.model_calls == 2


def test_restart_needs_no_model_call_for_stored_calls(build: Build) -> None:
    service, _ = build()
    _succeed(service, service.check(_call(body=BODY)).call_id)
    restarted, cached = build()
    again = restarted.check(_call(body=REWORDED))
    assert again.kind is DecisionKind.DUPLICATE
    assert cached.model_calls == 1


def test_weakest_leaf_decides(build: Build) -> None:
    service, _ = build()
    _succeed(service, service.check(_call(subject="Quarterly report", body=BODY)).call_id)
    changed_body = "Bob, please cancel the Q3 team offsite and refund all the deposits we paid."
    decision = service.check(_call(subject="Quarterly report", body=changed_body))
    assert decision.kind is DecisionKind.PROCEED
    semantic = next(r for r in decision.reports if r.stage is Stage.SEMANTIC)
    assert semantic.score is not None
    assert semantic.score < 0.85


@pytest.mark.parametrize(
    ("action", "expected"),
    [
        (BorderlineAction.DUPLICATE, DecisionKind.DUPLICATE),
        (BorderlineAction.PROCEED, DecisionKind.PROCEED),
    ],
)
def test_borderline_action(build: Build, action: BorderlineAction, expected: DecisionKind) -> None:
    # Thresholds bracket this pair's cosine so that it lands in the borderline band.
    policy = ToolPolicy(
        min_cosine_duplicate=0.999, min_cosine_borderline=0.5, borderline_action=action
    )
    service, _ = build(policy)
    _succeed(service, service.check(_call(body=BODY)).call_id)
    decision = service.check(_call(body=REWORDED))
    assert decision.kind is expected
    assert any("borderline" in note for note in decision.notes)


def test_whole_call_embedding_misses_critical_changes(build: Build) -> None:
    """What semantic caches do, kept as a mode for comparison: it merges a changed amount."""
    whole = ToolPolicy(mode=CompareMode.WHOLE, min_cosine_duplicate=0.9, min_cosine_borderline=0.9)
    for policy, expected in ((whole, DecisionKind.DUPLICATE), (ToolPolicy(), DecisionKind.PROCEED)):
        service, _ = build(policy)
        refund = ToolCall(f"s-{policy.mode}", "refund", {"order_id": "A-17", "amount": 100})
        _succeed(service, service.check(refund).call_id)
        bigger = ToolCall(f"s-{policy.mode}", "refund", {"order_id": "A-17", "amount": 100000})
        assert service.check(bigger).kind is expected


def test_window_expiry(build: Build) -> None:
    clock = Clock()
    service, _ = build(ToolPolicy(window_seconds=60), clock)
    _succeed(service, service.check(_call(body=BODY)).call_id)
    clock.now += 61
    assert service.check(_call(body=BODY)).kind is DecisionKind.PROCEED


def test_purge_after_retention(build: Build) -> None:
    clock = Clock()
    service, _ = build(ToolPolicy(window_seconds=60), clock)
    first = service.check(_call(body=BODY))
    clock.now += 10
    assert service.purge(retention_seconds=5) == 0  # never inside a dedup window
    clock.now += 60
    assert service.purge(retention_seconds=5) == 1
    with pytest.raises(NotFound, match="no call"):
        service.get(T, first.call_id or "")


def _stored_texts(db: Path) -> set[str]:
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT text_hash FROM embeddings").fetchall()
    conn.close()
    return {text_hash for (text_hash,) in rows}


def test_vectors_and_keys_go_with_the_last_call_that_uses_them(
    build: Build, tmp_path: Path
) -> None:
    clock = Clock()
    service, _ = build(ToolPolicy(window_seconds=60), clock)
    old, shared, new = "The old note about the garden", BODY, "A new note about the roof"
    service.check(ToolCall("s1", "note", {"text": old}, idempotency_key="k-old"))
    service.check(ToolCall("s1", "note", {"text": shared}))
    # A dry run embeds its text too, but stores no call that needs it: its vector stays in
    # memory, as a duplicate's does.
    passing = "A passing thought, never stored"
    service.check(ToolCall("s1", "note", {"text": passing}), dry_run=True)
    clock.now += 100
    service.check(ToolCall("s2", "note", {"text": shared}))
    service.check(ToolCall("s2", "note", {"text": new}))
    before = _stored_texts(tmp_path / "ledger.db")
    assert {stable_hash(t) for t in (old, shared, new)} <= before
    assert stable_hash(passing) not in before
    assert service.purge(retention_seconds=50) == 2
    assert _stored_texts(tmp_path / "ledger.db") == {stable_hash(shared), stable_hash(new)}
    # The old call's key is free again: nothing stored still holds it.
    reused = service.check(ToolCall("s1", "other", {"x": 1}, idempotency_key="k-old"))
    assert reused.kind is DecisionKind.PROCEED


def test_the_decision_log_has_its_own_retention(build: Build, tmp_path: Path) -> None:
    clock = Clock()
    service, _ = build(ToolPolicy(window_seconds=60), clock)
    first = service.check(_call(body=BODY))
    service.feedback(T, first.check_id, "duplicate", None, "human")
    clock.now += 1000
    second = service.check(_call(body=BODY))
    service.purge(retention_seconds=10_000, log_retention_seconds=500)
    entries = list(SqliteLedger(tmp_path / "ledger.db").iter_log())
    assert [e.check_id for e in entries] == [second.check_id]
    with sqlite3.connect(tmp_path / "ledger.db") as conn:
        assert conn.execute("SELECT COUNT(*) FROM feedback").fetchone() == (0,)
    conn.close()


def test_every_check_is_logged(build: Build, tmp_path: Path) -> None:
    service, _ = build()
    first = service.check(_call(body=BODY))
    second = service.check(_call(body=BODY), dry_run=True)
    entries = list(SqliteLedger(tmp_path / "ledger.db").iter_log())
    assert [e.check_id for e in entries] == [first.check_id, second.check_id]
    assert entries[1].dry_run
    assert entries[1].decision == "in_progress"
    assert entries[1].explain["stages"][0]["stage"] == "exact"


def test_key_replay_after_a_retry_answers_for_the_newest_attempt(build: Build) -> None:
    service, _ = build()
    keyed = ToolCall("s1", "refund", {"order_id": "A-1", "amount": 5}, idempotency_key="K1")
    first = service.check(keyed)
    service.complete(
        T, first.call_id or "", Outcome(CallStatus.FAILED, failure_class=FailureClass.RETRYABLE)
    )
    retry = service.check(ToolCall("s1", "refund", {"order_id": "A-1", "amount": 5.0}))
    assert retry.kind is DecisionKind.PROCEED
    _succeed(service, retry.call_id)
    replay = service.check(keyed)
    assert replay.kind is DecisionKind.DUPLICATE
    assert replay.call_id == retry.call_id


def test_exact_reissue_of_an_old_call_beyond_max_candidates(build: Build) -> None:
    service, _ = build(ToolPolicy(max_candidates=2))
    _succeed(service, service.check(_call(body=BODY)).call_id)
    for i in range(3):
        service.check(_call(body=f"Hi Bob, the Q3 report is attached. Variant {'x' * (i + 1)}."))
    again = service.check(_call(body=BODY, request_id="late"))
    assert again.kind is DecisionKind.DUPLICATE
    assert again.match is not None
    assert again.match.stage is Stage.EXACT


def test_two_processes_on_one_database(build: Build) -> None:
    """A second service sees the first one's claims: no double proceed, no stale index."""
    first, _ = build()
    second, _ = build()
    paraphrase = _call(body=REWORDED)
    # The second service loads the group before the first claims anything in it.
    _succeed(second, second.check(_call(body="Hi Bob, the Q3 numbers look good.")).call_id)
    assert second.check(paraphrase, dry_run=True).kind is DecisionKind.PROCEED
    claimed = first.check(_call(body=BODY))
    assert claimed.kind is DecisionKind.PROCEED
    _succeed(first, claimed.call_id)
    assert second.check(_call(body=BODY)).kind is DecisionKind.DUPLICATE
    assert second.check(paraphrase).kind is DecisionKind.DUPLICATE
