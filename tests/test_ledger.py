"""Both ledgers, SQLite and PostgreSQL: migrations, claims, completions, purge, the log."""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import nullcontext
from dataclasses import replace
from pathlib import Path

import pytest

from tests.helpers import canonicalize, store_as_left_by
from tooldedup.dedup.canonical import sent_hash
from tooldedup.dedup.errors import Conflict, NotFound
from tooldedup.dedup.ledger import ClaimConflict, LogEntry, SqliteLedger, SqlLedger, sqlite_db
from tooldedup.dedup.ledger.base import ArgsMatch, Lookup, SpentToken
from tooldedup.dedup.ledger.migrations import MIGRATIONS
from tooldedup.dedup.ledger.postgres import PostgresLedger
from tooldedup.dedup.ledger.rows import COLUMNS, ParsedRecords
from tooldedup.dedup.ledger.sqlite_db import CHECKPOINT_COMMITS, SqliteDatabase
from tooldedup.dedup.policy import ToolPolicy
from tooldedup.dedup.records import DEFAULT_TENANT as T
from tooldedup.dedup.records import CallRecord, CallStatus, FailureClass, Outcome, Scope
from tooldedup.dedup.semantic import vector_key

S = Scope(T, "s")


def _record(call_id: str, *, created_at: float = 100.0, intent: str = "ik_1") -> CallRecord:
    canonical = canonicalize({"to": "a@b.co", "body": "hello there my friend"}, ToolPolicy())
    return CallRecord(
        call_id=call_id,
        row_id=0,
        scope="s",
        session_id="s",
        tool="send",
        args=canonical.args,
        args_hash=canonical.args_hash,
        exact_signature=canonical.exact_signature,
        exact_leaves=canonical.exact_leaves,
        semantic_leaves=canonical.semantic_leaves,
        intent_key=intent,
        idempotency_key=None,
        status=CallStatus.PENDING,
        created_at=created_at,
        lease_expires_at=created_at + 300,
    )


@pytest.fixture(params=["sqlite", "postgres"])
def ledger(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[SqlLedger]:
    """A fresh ledger on each backend: a SQLite file, or a new PostgreSQL database."""
    store: SqlLedger
    if request.param == "sqlite":
        store = SqliteLedger(tmp_path / "ledger.db")
    else:
        store = PostgresLedger(request.getfixturevalue("postgres_url"))
    yield store
    store.close()


def test_schema_is_migrated_once(tmp_path: Path) -> None:
    path = tmp_path / "ledger.db"
    first = SqliteLedger(path)
    assert first.migrations == [m.__name__ for m in MIGRATIONS]
    first.close()
    again = SqliteLedger(path)
    assert again.migrations == [m.__name__ for m in MIGRATIONS]
    mode = sqlite3.connect(path).execute("PRAGMA journal_mode").fetchone()[0]
    assert mode == "wal"


def test_claim_roundtrip(ledger: SqlLedger) -> None:
    stored = ledger.claim(_record("c1"))
    assert isinstance(stored, CallRecord)
    assert stored.row_id > 0
    fetched = ledger.get(T, "c1")
    assert fetched == stored
    found = ledger.candidates(S, "send", stored.exact_signature, 0.0, 10)
    assert [r.call_id for r in found] == ["c1"]
    assert ledger.candidates(S, "send", stored.exact_signature, 101.0, 10) == []


def test_second_pending_claim_of_an_intent_conflicts(ledger: SqlLedger) -> None:
    ledger.claim(_record("c1"))
    conflict = ledger.claim(_record("c2"))
    assert isinstance(conflict, ClaimConflict)
    assert conflict.holder.call_id == "c1"
    assert ledger.get(T, "c2") is None


@pytest.mark.parametrize(
    ("first", "second", "allowed"),
    [
        (Outcome(CallStatus.SUCCEEDED, result=1), Outcome(CallStatus.SUCCEEDED, result=1), True),
        (
            Outcome(CallStatus.SUCCEEDED),
            Outcome(CallStatus.FAILED, failure_class=FailureClass.POISON),
            False,
        ),
        (Outcome(CallStatus.UNKNOWN), Outcome(CallStatus.SUCCEEDED), True),
        (
            Outcome(CallStatus.FAILED, failure_class=FailureClass.AMBIGUOUS),
            Outcome(CallStatus.SUCCEEDED),
            True,
        ),
        (
            Outcome(CallStatus.FAILED, failure_class=FailureClass.RETRYABLE),
            Outcome(CallStatus.SUCCEEDED),
            False,
        ),
        (
            Outcome(CallStatus.FAILED, failure_class=FailureClass.POISON),
            Outcome(CallStatus.FAILED, failure_class=FailureClass.RETRYABLE),
            False,
        ),
    ],
)
def test_completion_transitions(
    ledger: SqlLedger, first: Outcome, second: Outcome, allowed: bool
) -> None:
    ledger.claim(_record("c1"))
    ledger.complete(T, "c1", first, 200.0)
    if allowed:
        assert ledger.complete(T, "c1", second, 201.0).status is second.status
    else:
        with pytest.raises(Conflict):
            ledger.complete(T, "c1", second, 201.0)
        assert ledger.get(T, "c1").status is first.status  # type: ignore[union-attr]


def test_completion_of_unknown_call(ledger: SqlLedger) -> None:
    with pytest.raises(NotFound):
        ledger.complete(T, "nope", Outcome(CallStatus.SUCCEEDED), 1.0)


def test_retry_supersedes_the_failed_attempt(ledger: SqlLedger) -> None:
    first = ledger.claim(_record("c1"))
    assert isinstance(first, CallRecord)
    ledger.complete(T, "c1", Outcome(CallStatus.FAILED, failure_class=FailureClass.RETRYABLE), 1.0)
    retry = ledger.claim(replace(_record("c2"), attempt_of="c1"))
    assert isinstance(retry, CallRecord)
    live = ledger.candidates(S, "send", first.exact_signature, 0.0, 10)
    assert [r.call_id for r in live] == ["c2"]
    assert ledger.get(T, "c1") is not None  # history is kept


def test_purge_removes_only_old_calls(ledger: SqlLedger) -> None:
    ledger.claim(_record("old", created_at=10.0, intent="ik_old"))
    ledger.claim(_record("new", created_at=1000.0, intent="ik_new"))
    assert ledger.purge(500.0) == 1
    assert ledger.get(T, "old") is None
    assert ledger.get(T, "new") is not None


def test_decision_log_is_append_only(ledger: SqlLedger) -> None:
    entry = LogEntry(
        "chk_1",
        1.0,
        "s",
        "s",
        "t",
        {"x": 1},
        "proceed",
        None,
        None,
        "c1",
        None,
        0.5,
        False,
        {"stages": []},
    )
    ledger.append_log(entry)
    assert list(ledger.iter_log()) == [entry]
    with pytest.raises(Exception, match="append-only"):
        ledger.db.execute("UPDATE decisions SET decision = 'duplicate'")
    assert list(ledger.iter_log()) == [entry]


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_the_asks_table_of_development_builds_goes(
    request: pytest.FixtureRequest, tmp_path: Path, backend: str
) -> None:
    """A store a development build left at m010: its asks table goes, its ask's log line
    stays (its token's expiry unknown, so no longer open), and spent tokens start empty."""
    db = store_as_left_by(request, tmp_path, backend, 10)
    try:
        assert MIGRATIONS[9].__name__ == "m010_asks_and_observed"
        with db.write():
            db.execute(
                "INSERT INTO asks (token_hash, check_id, tenant, scope, session_id, tool,"
                " args_hash, sent_hash, created_at, expires_at) VALUES"
                " ('h', 'chk_ask', 'default', 's', 's', 't', 'a', 'b', 1.0, 601.0)"
            )
            db.execute(
                "INSERT INTO decisions (check_id, ts, scope, session_id, tool, args_json,"
                " decision, latency_ms, dry_run, explain_json) VALUES"
                " ('chk_ask', 1.0, 's', 's', 't', '{}', 'ask', 1.0, 0, '{}')"
            )
        ledger = SqlLedger(db)  # applies the rest
        tables = {
            "sqlite": "SELECT name FROM sqlite_master WHERE type = 'table'",
            "postgresql": "SELECT tablename AS name FROM pg_tables WHERE schemaname = 'public'",
        }[db.dialect.name]
        names = {row["name"] for row in db.execute(tables).rows}
        assert "asks" not in names
        assert {"spent_confirm_tokens", "server_secrets"} <= names
        entry = ledger.log_entry(T, "chk_ask")
        assert entry is not None
        assert entry.ask_expires_at is None
        assert ledger.ask_ends(T, 0.0, 2.0) == {"chk_ask": ("t", "expired")}
    finally:
        db.close()


def test_a_confirm_token_is_spent_once(ledger: SqlLedger) -> None:
    spent = SpentToken("chk_ask", T, "chk_1", 10.0, 600.0)
    start = threading.Barrier(6)

    def spend(n: int) -> bool:
        start.wait()
        return ledger.spend_confirm_token(replace(spent, used_by=f"chk_{n}"))

    with ThreadPoolExecutor(6) as pool:
        won = [n for n, spent_it in enumerate(pool.map(spend, range(6))) if spent_it]
    assert len(won) == 1
    winner = f"chk_{won[0]}"
    assert ledger.confirm_token_spent_by(T, "chk_ask") == winner
    assert ledger.confirm_token_spent_by("acme", "chk_ask") is None
    ledger.unspend_confirm_token("chk_ask", "chk_other")  # only its spender gives it back
    assert ledger.confirm_token_spent_by(T, "chk_ask") == winner
    ledger.unspend_confirm_token("chk_ask", winner)
    assert ledger.spend_confirm_token(spent)
    assert ledger.purge_spent_confirm_tokens(600.0) == 0
    assert ledger.purge_spent_confirm_tokens(600.5) == 1
    assert ledger.confirm_token_spent_by(T, "chk_ask") is None


def test_policies_are_stored(ledger: SqlLedger) -> None:
    ledger.save_policy(T, "t", {"min_cosine_duplicate": 0.95})
    ledger.save_policy(T, "t", {"min_cosine_duplicate": 0.97})
    assert ledger.load_policies() == {T: {"t": {"min_cosine_duplicate": 0.97}}}


def test_claim_rechecks_live_calls_of_the_intent(ledger: SqlLedger) -> None:
    ledger.claim(_record("c1"))
    ledger.complete(T, "c1", Outcome(CallStatus.SUCCEEDED, result=1), 150.0)
    # Another process looked before c1 existed and now tries to claim the same intent.
    late = ledger.claim(_record("c2"), live_since=50.0)
    assert isinstance(late, ClaimConflict)
    assert late.holder.call_id == "c1"
    # Outside the window the old call no longer counts.
    fresh = ledger.claim(_record("c3"), live_since=150.0)
    assert isinstance(fresh, CallRecord)


def test_the_live_intent_lookup_reads_only_that_intent(tmp_path: Path) -> None:
    """A claim's recheck goes by the intent index, not through every live call in the
    window (which it did by the tenant's index: a scan growing with the window)."""
    ledger = SqliteLedger(tmp_path / "ledger.db")
    for n in range(50):
        ledger.claim(_record(f"other{n}", intent=f"ik_other{n}"))
    statements: list[str] = []
    ledger.db.execute("SELECT 1")  # this thread's connection, opened before it is traced
    conn = ledger.db._conn()
    conn.set_trace_callback(statements.append)
    late = ledger.claim(_record("c2", intent="ik_other7"), live_since=50.0)
    conn.set_trace_callback(None)
    assert isinstance(late, ClaimConflict)
    assert late.holder.call_id == "other7"
    lookup = next(s for s in statements if s.startswith("SELECT") and "intent_key = " in s)
    plan = " ".join(row[3] for row in conn.execute(f"EXPLAIN QUERY PLAN {lookup}"))
    assert "USING INDEX calls_intent" in plan, plan
    ledger.close()


def test_latest_attempt_follows_the_chain(ledger: SqlLedger) -> None:
    ledger.claim(_record("c1"))
    ledger.complete(T, "c1", Outcome(CallStatus.FAILED, failure_class=FailureClass.RETRYABLE), 1.0)
    ledger.claim(replace(_record("c2"), attempt_of="c1"))
    first = ledger.get(T, "c1")
    assert first is not None
    assert ledger.latest_attempt(first).call_id == "c2"


def test_exact_match_finds_the_newest_live_call(ledger: SqlLedger) -> None:
    ledger.claim(_record("old", created_at=10.0, intent="ik_a"))
    ledger.complete(T, "old", Outcome(CallStatus.SUCCEEDED), 11.0)
    ledger.claim(_record("new", created_at=20.0, intent="ik_b"))
    by_args = _record("x").args_hash
    found = ledger.exact_match(S, "send", Lookup.ARGS, by_args, 0.0)
    assert found is not None
    assert found.call_id == "new"
    assert ledger.exact_match(S, "send", Lookup.ARGS, by_args, 30.0) is None
    assert ledger.exact_match(Scope(T, "other"), "send", Lookup.ARGS, by_args, 0.0) is None
    ledger.checkpoint()  # housekeeping never fails on a live database


def test_args_match_finds_the_newest_call_and_what_labels_rule_out(ledger: SqlLedger) -> None:
    by_args = _record("x").args_hash
    empty = ledger.args_match(S, "send", by_args, 0.0)
    assert (empty.call, empty.ruled_out) == (None, frozenset())
    ledger.claim(_record("old", created_at=10.0, intent="ik_a"))
    ledger.complete(T, "old", Outcome(CallStatus.SUCCEEDED), 11.0)
    ledger.claim(_record("new", created_at=20.0, intent="ik_b"))
    found = ledger.args_match(S, "send", by_args, 0.0)
    assert found.call is not None
    assert found.call.call_id == "new"
    assert found.ruled_out == frozenset()
    # A check of these args matched both calls in turn; each was labelled another request.
    for number, matched in enumerate(("old", "new")):
        check_id = f"chk_{number}"
        entry = LogEntry(
            check_id, 30.0, "s", "s", "send", _record("x").args, "duplicate", "exact", 1.0,
            None, matched, 0.5, False, {},
        )  # fmt: skip
        ledger.append_log(entry)
        ledger.add_feedback(T, check_id, "distinct", None, "user", 31.0)
    ruled = ledger.args_match(S, "send", by_args, 0.0)
    assert ruled.call is not None
    assert ruled.call.call_id == "new"
    assert ruled.ruled_out == {"old", "new"}
    # Outside the window, or in another scope or tool: no call; the labels stay with the args.
    late = ledger.args_match(S, "send", by_args, 30.0)
    assert (late.call, late.ruled_out) == (None, frozenset({"old", "new"}))
    assert ledger.args_match(Scope(T, "other"), "send", by_args, 0.0) == ArgsMatch(
        None, frozenset()
    )
    assert ledger.args_match(S, "other", by_args, 0.0) == ArgsMatch(None, frozenset())


@pytest.mark.parametrize(
    ("lookup", "digest", "expected"),
    [
        (Lookup.ARGS, "H", "by-args"),
        (Lookup.SENT, "R", "replayed"),
        (Lookup.ARGS, "nothing", None),
        (Lookup.SENT, "nothing", None),
        (Lookup.LEGACY, "H", None),  # both rows were written with their args as sent
    ],
)
def test_exact_match_compares_the_hash_it_is_asked_for(
    ledger: SqlLedger, lookup: Lookup, digest: str, expected: str | None
) -> None:
    raw = {"to": "A@B.CO", "body": "hello there my friend "}
    ledger.claim(_record("by-args", created_at=10.0, intent="ik_a"))
    # Newer, with other canonical args, sent as ``raw``: found by the hash of what was sent.
    replayed = replace(
        _record("replayed", created_at=20.0, intent="ik_b"), args_hash="other", sent_args=raw
    )
    ledger.claim(replayed)
    digests = {"H": _record("x").args_hash, "R": sent_hash(raw), "nothing": "0" * 64}
    found = ledger.exact_match(S, "send", lookup, digests[digest], 0.0)
    assert (None if found is None else found.call_id) == expected


def test_a_failed_commit_leaves_no_transaction_open(tmp_path: Path) -> None:
    ledger = SqliteLedger(tmp_path / "ledger.db")
    conn = ledger.db._conn()  # the calling thread's connection, as the ledger uses it
    refuse = {"commit": True}

    def authorizer(action: int, arg1: str | None, *rest: object) -> int:
        if action == sqlite3.SQLITE_TRANSACTION and arg1 == "COMMIT" and refuse["commit"]:
            refuse["commit"] = False
            return sqlite3.SQLITE_DENY
        return sqlite3.SQLITE_OK

    conn.set_authorizer(authorizer)
    with pytest.raises(sqlite3.DatabaseError):
        ledger.claim(_record("c1"))
    assert not conn.in_transaction
    # The next claim is a transaction of its own, committed and seen by others.
    ledger.claim(_record("c2", intent="ik_2"))
    other = sqlite3.connect(tmp_path / "ledger.db")
    ids = {row[0] for row in other.execute("SELECT call_id FROM calls")}
    assert ids == {"c2"}
    other.close()
    ledger.close()


def test_connections_leave_with_their_threads(tmp_path: Path) -> None:
    ledger = SqliteLedger(tmp_path / "ledger.db")
    before = len(os.listdir("/proc/self/fd"))
    for n in range(30):
        thread = threading.Thread(target=ledger.get, args=(T, f"c{n}"))
        thread.start()
        thread.join()
    assert len(os.listdir("/proc/self/fd")) <= before + 2
    ledger.close()


def test_vector_keys_follow_call_ids_not_reused_row_ids() -> None:
    # SQLite hands a purged row's id to the next call: the index must not mix them up.
    old = replace(_record("call_old"), row_id=1)
    new = replace(_record("call_new"), row_id=1)
    assert vector_key(old) != vector_key(new)
    assert vector_key(old) == vector_key(replace(old, row_id=7))
    assert 0 <= vector_key(old) < 2**63


def _log_entry(check_id: str) -> LogEntry:
    return LogEntry(
        check_id, 1.0, "s", "s", "t", {"x": 1}, "proceed", None, None, None, None, 0.5, False, {}
    )


def test_a_log_line_inside_a_transaction_is_part_of_it(ledger: SqlLedger) -> None:
    class Undo(Exception):
        pass

    # Another thread appends at the same time: it must neither wait for this transaction's
    # lock forever nor have its line rolled back with it.
    other = threading.Thread(target=ledger.append_log, args=(_log_entry("chk_other"),))

    def inside_then_undo() -> None:
        with ledger.db.write():
            ledger.append_log(_log_entry("chk_inside"))
            other.start()
            other.join(0.2)
            raise Undo

    with pytest.raises(Undo):
        inside_then_undo()
    other.join(30)
    assert not other.is_alive()
    assert [e.check_id for e in ledger.iter_log()] == ["chk_other"]


def test_many_threads_log_every_line_once(ledger: SqlLedger) -> None:
    ids = [f"chk_{n}" for n in range(64)]
    threads = [threading.Thread(target=ledger.append_log, args=(_log_entry(i),)) for i in ids]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert sorted(e.check_id for e in ledger.iter_log()) == sorted(ids)


def test_a_candidate_row_is_parsed_again_only_once_it_changed(ledger: SqlLedger) -> None:
    stored = _record("c1")
    ledger.claim(stored)
    first = ledger.candidates(S, "send", stored.exact_signature, 0.0, 10)
    again = ledger.candidates(S, "send", stored.exact_signature, 0.0, 10)
    assert again[0] is first[0]
    ledger.complete(T, "c1", Outcome(CallStatus.SUCCEEDED, result={"id": 7}), 101.0)
    (done,) = ledger.candidates(S, "send", stored.exact_signature, 0.0, 10)
    assert (done.status, done.result) == (CallStatus.SUCCEEDED, {"id": 7})
    assert first[0].status is CallStatus.PENDING


@pytest.mark.parametrize(("max_row_chars", "max_chars"), [(-1, 10), (100, 99)])
def test_parsed_records_bounds_are_checked(max_row_chars: int, max_chars: int) -> None:
    with pytest.raises(ValueError, match="max_row_chars"):
        ParsedRecords(max_row_chars=max_row_chars, max_chars=max_chars)


def test_parsed_records_stay_within_their_bound(ledger: SqlLedger) -> None:
    big = replace(_record("big"), sent_args={"body": "x" * 20_000})
    ledger.claim(big)
    records = ParsedRecords(max_row_chars=16_384, max_chars=32_768)
    row = ledger.db.execute(f"SELECT {COLUMNS} FROM calls WHERE call_id = 'big'").one()
    assert row is not None
    # A row over the bound is parsed each time, never kept.
    assert records.record(row) is not records.record(row)
    small = [
        replace(_record(f"s{i}", intent=f"ik_{i}"), sent_args={"n": "y" * 5000}) for i in range(8)
    ]
    for record in small:
        ledger.claim(record)
    rows = ledger.db.execute(f"SELECT {COLUMNS} FROM calls WHERE call_id LIKE 's%'").rows
    for row in rows:
        records.record(row)
    assert records._chars <= 32_768


@pytest.mark.parametrize(
    ("autocommit", "commits", "max_seconds", "folded"),
    [
        (False, 1, 3600.0, False),  # one commit, a moment ago: not yet
        (False, CHECKPOINT_COMMITS, 3600.0, True),
        (True, 1, 3600.0, False),
        (True, CHECKPOINT_COMMITS, 3600.0, True),  # writes outside a transaction count too
        (False, 1, 0.0, True),  # one commit, but the second is over
    ],
)
def test_a_checkpoint_waits_for_enough_commits_or_a_second(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    autocommit: bool,
    commits: int,
    max_seconds: float,
    folded: bool,
) -> None:
    monkeypatch.setattr(sqlite_db, "CHECKPOINT_MAX_SECONDS", max_seconds)
    db = SqliteDatabase(tmp_path / "store.db")
    db.execute("CREATE TABLE t (n INTEGER)")
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # the table itself, in the file
    for n in range(commits):
        with nullcontext() if autocommit else db.write():
            db.execute("INSERT INTO t VALUES (?)", (n,))
    db.checkpoint()
    # Immutable: the database file alone, without the write-ahead log.
    file_only = sqlite3.connect(f"file:{tmp_path / 'store.db'}?immutable=1", uri=True)
    try:
        (stored,) = file_only.execute("SELECT count(*) FROM t").fetchone()
    finally:
        file_only.close()
        db.close()
    assert stored == (commits if folded else 0)
