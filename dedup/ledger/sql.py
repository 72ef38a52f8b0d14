"""The ledger on a SQL ``Database``: the same statements on SQLite and on PostgreSQL."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from tooldedup.dedup.canonical import canonical_json, sent_hash, stable_hash
from tooldedup.dedup.errors import Conflict, LeaseExpired, NotFound
from tooldedup.dedup.ledger.ask_store import SqlAskStore
from tooldedup.dedup.ledger.base import ArgsMatch, ClaimConflict, KeyBinding, KeyKind, Lookup
from tooldedup.dedup.ledger.database import Database
from tooldedup.dedup.ledger.log_store import SqlLogStore
from tooldedup.dedup.ledger.migrations import migrate
from tooldedup.dedup.ledger.rows import (
    COLUMNS,
    LIVE,
    ParsedRecords,
    describe,
    describe_outcome,
    dumps,
    may_complete,
    record_from_row,
    with_row_id,
)
from tooldedup.dedup.records import CallRecord, CallStatus, Outcome, Scope

__all__ = ["SqlLedger"]

_PURGE_BATCH = 5000


_LOOKUP_SQL = {
    Lookup.ARGS: " AND args_hash = ?",
    Lookup.SENT: " AND sent_hash = ?",
    Lookup.LEGACY: " AND sent_args_json IS NULL AND args_hash = ?",
}


class SqlLedger(SqlLogStore, SqlAskStore):
    """Calls, outcomes, policies and the decision log in one SQL database."""

    _legacy: bool | None = None

    def __init__(self, db: Database) -> None:
        super().__init__(db)
        self.migrations = migrate(db)
        self._records = ParsedRecords()

    @contextmanager
    def serialized(self, scope: Scope, tool: str) -> Iterator[None]:
        """Decide and claim for (scope, tool) one at a time, across every process."""
        with self.db.serialized(canonical_json([scope.tenant, scope.name, tool])):
            yield

    def ping(self) -> None:
        """Raise ``StoreUnavailable`` unless the database answers."""
        self.db.ping()

    def candidates(
        self,
        scope: Scope,
        tool: str,
        exact_signature: str,
        since: float,
        limit: int,
        step: tuple[str, str] | None = None,
    ) -> list[CallRecord]:
        """Live calls sharing scope, tool and exact signature (and step), newest first."""
        where, params = _step_filter(step)
        rows = self.db.execute(
            f"SELECT {COLUMNS} FROM calls WHERE scope = ? AND tool = ? AND exact_sig = ?"
            f" AND tenant = ? AND {LIVE}{where} ORDER BY created_at DESC, row_id DESC LIMIT ?",
            (scope.name, tool, exact_signature, scope.tenant, since, *params, limit),
        ).rows
        return [self._records.record(r) for r in rows]

    def args_match(
        self,
        scope: Scope,
        tool: str,
        args_hash: str,
        since: float,
        step: tuple[str, str] | None = None,
    ) -> ArgsMatch:
        """The newest live call with these canonical args, and the calls labels rule out for
        them, in one statement: every write check starts here, and one statement costs a
        check less than two (each pays its own round through the driver)."""
        newest, params = _newest_call(scope, tool, Lookup.ARGS, args_hash, since, step)
        joined = self.db.dialect.space_joined.format("call_id")
        row = self.db.execute(
            f"SELECT x.ruled_out AS ruled_out, c.* FROM (SELECT {joined} AS ruled_out"
            " FROM excluded_matches WHERE scope = ? AND tool = ? AND args_hash = ?"
            f" AND tenant = ?) AS x LEFT JOIN ({newest}) AS c ON 1 = 1",
            (scope.name, tool, args_hash, scope.tenant, *params),
        ).one()
        assert row is not None  # an aggregate over no rows is still one row
        # Call ids are "call_" and hex digits: a space never falls inside one.
        ruled_out = frozenset((row["ruled_out"] or "").split())
        call = None if row["call_id"] is None else self._records.record(row)
        return ArgsMatch(call, ruled_out)

    def exact_match(
        self,
        scope: Scope,
        tool: str,
        lookup: Lookup,
        digest: str,
        since: float,
        step: tuple[str, str] | None = None,
    ) -> CallRecord | None:
        """The newest live call whose ``lookup`` hash is ``digest``, by index, not by scan."""
        newest, params = _newest_call(scope, tool, lookup, digest, since, step)
        row = self.db.execute(newest, params).one()
        return None if row is None else self._records.record(row)

    def has_legacy_calls(self) -> bool:
        """Whether rows written by release 0.1 (no args as sent) are still stored."""
        if self._legacy is None or self._legacy:
            found = self.db.execute(
                "SELECT 1 FROM calls WHERE sent_args_json IS NULL LIMIT 1"
            ).one()
            # Only purges remove them, and nothing writes them again: once gone, gone.
            self._legacy = found is not None
        return self._legacy

    def reserve_key(
        self,
        scope: Scope,
        key: str,
        binding: KeyBinding,
        now: float,
        since: float,
        kind: KeyKind = KeyKind.IDEMPOTENCY,
    ) -> KeyBinding:
        """Bind ``key`` to this tool and intent unless it is bound inside the window.

        Returns the binding in force: this call's, or the earlier one's. One upsert, so
        concurrent checks in any process agree on the first.
        """
        table = kind.value  # an enum of two table names, never caller text
        with self.db.write():
            self.db.execute(
                f"INSERT INTO {table} (tenant, scope, key, tool, intent_key, sent_hash,"
                " created_at) VALUES (?,?,?,?,?,?,?) ON CONFLICT (tenant, scope, key) DO UPDATE SET"
                " tool = excluded.tool, intent_key = excluded.intent_key,"
                " sent_hash = excluded.sent_hash, created_at = excluded.created_at"
                f" WHERE {table}.created_at < ?",
                (
                    scope.tenant,
                    scope.name,
                    key,
                    binding.tool,
                    binding.intent_key,
                    binding.sent_hash,
                    now,
                    since,
                ),
            )
            row = self.db.execute(
                f"SELECT tool, intent_key, sent_hash FROM {table}"
                " WHERE tenant = ? AND scope = ? AND key = ?",
                (scope.tenant, scope.name, key),
            ).one()
        assert row is not None  # just written, in the same transaction
        return KeyBinding(str(row["tool"]), str(row["intent_key"]), str(row["sent_hash"]))

    def by_attempt_token(self, scope: Scope, token: str, since: float) -> CallRecord | None:
        """The call a check with this attempt token claimed, if one did."""
        row = self.db.execute(
            f"SELECT {COLUMNS} FROM calls WHERE scope = ? AND attempt_token = ? AND tenant = ?"
            " AND created_at >= ? ORDER BY row_id DESC LIMIT 1",
            (scope.name, token, scope.tenant, since),
        ).one()
        return None if row is None else record_from_row(row)

    def checkpoint(self) -> None:
        """Fold the write-ahead log into the database, off the request path."""
        self.db.checkpoint()

    def latest_attempt(self, record: CallRecord) -> CallRecord:
        """The newest retry in ``record``'s chain of attempts (``record`` if none)."""
        current = record
        for _ in range(1000):  # a chain is short; the bound only guards against a cycle
            row = self.db.execute(
                # A retry is claimed in its original's scope and tool: saying so lets the
                # (scope, tool, created_at) index serve a lookup that would scan every call.
                f"SELECT {COLUMNS} FROM calls WHERE scope = ? AND tool = ? AND attempt_of = ?"
                " AND tenant = ? ORDER BY row_id DESC LIMIT 1",
                (current.scope, current.tool, current.call_id, current.tenant),
            ).one()
            if row is None:
                break
            current = record_from_row(row)
        return current

    def recent(self, scope: Scope, tool: str, since: float, limit: int) -> list[CallRecord]:
        """Live calls of ``tool`` in ``scope``, newest first."""
        rows = self.db.execute(
            f"SELECT {COLUMNS} FROM calls WHERE scope = ? AND tool = ? AND tenant = ? AND {LIVE}"
            " ORDER BY created_at DESC, row_id DESC LIMIT ?",
            (scope.name, tool, scope.tenant, since, limit),
        ).rows
        return [record_from_row(r) for r in rows]

    def by_idempotency_key(self, scope: Scope, key: str, since: float) -> CallRecord | None:
        """The newest call claimed with this explicit key."""
        row = self.db.execute(
            f"SELECT {COLUMNS} FROM calls WHERE scope = ? AND idempotency_key = ? AND tenant = ?"
            " AND created_at >= ? ORDER BY row_id DESC LIMIT 1",
            (scope.name, key, scope.tenant, since),
        ).one()
        return None if row is None else record_from_row(row)

    def claim(
        self, record: CallRecord, *, live_since: float | None = None
    ) -> CallRecord | ClaimConflict:
        """Store a pending claim; if ``record.attempt_of`` is set, retire that attempt.

        With ``live_since``, a live call of the same intent created since then (claimed by
        another process after this one looked) wins, and the claim is not stored.
        """
        db = self.db
        try:
            with db.write():
                if live_since is not None:
                    holder = self._live_holder(record, live_since)
                    if holder is not None:
                        return ClaimConflict(holder)
                row_id = self._insert(record)
        except db.integrity_error:
            # The unique index on pending intents is the last guard: a claim that raced
            # past every lock still finds the holder here.
            holder = self._pending_holder(record)
            if holder is None:
                raise
            return ClaimConflict(holder)
        return with_row_id(record, row_id)

    def _live_holder(self, record: CallRecord, live_since: float) -> CallRecord | None:
        # By the intent index: the intent key hashes tenant, scope, tool and args, so the
        # lookup reads the few calls of this intent, not every live call in the window.
        row = self.db.execute(
            f"SELECT {COLUMNS} FROM calls WHERE intent_key = ? AND tenant = ? AND {LIVE}"
            " AND NOT (status = 'failed' AND failure_class = 'retryable')"
            " ORDER BY row_id DESC LIMIT 1",
            (record.intent_key, record.tenant, live_since),
        ).one()
        return None if row is None else record_from_row(row)

    def _insert(self, record: CallRecord) -> int:
        db = self.db
        inserted = db.execute(
            "INSERT INTO calls (call_id, scope, session_id, tool, args_json, args_hash,"
            " exact_sig, exact_leaves, semantic_leaves, intent_key, idempotency_key, status,"
            " created_at, lease_expires_at, attempt_of, run_id, step, sent_args_json,"
            " sent_hash, attempt_token, tenant)"
            " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?) RETURNING row_id",
            (
                record.call_id,
                record.scope,
                record.session_id,
                record.tool,
                canonical_json(record.args),
                record.args_hash,
                record.exact_signature,
                canonical_json([list(p) for p in record.exact_leaves]),
                canonical_json([[x.path, x.text] for x in record.semantic_leaves]),
                record.intent_key,
                record.idempotency_key,
                CallStatus.PENDING.value,
                record.created_at,
                record.lease_expires_at,
                record.attempt_of,
                record.run_id,
                record.step,
                # As sent, key order and number spelling kept: this is what callers read.
                json.dumps(record.sent_args, ensure_ascii=False, allow_nan=False),
                sent_hash(record.sent_args),
                record.attempt_token,
                record.tenant,
            ),
        ).one()
        assert inserted is not None
        if record.attempt_of is not None:
            db.execute("UPDATE calls SET superseded = 1 WHERE call_id = ?", (record.attempt_of,))
        # A stored call keeps its texts' vectors from being purged with older calls.
        hashes = sorted({stable_hash(leaf.text) for leaf in record.semantic_leaves})
        for start in range(0, len(hashes), 500):
            chunk = hashes[start : start + 500]
            marks = ",".join("?" * len(chunk))
            db.execute(
                f"UPDATE embeddings SET used_at = ? WHERE text_hash IN ({marks})",
                (record.created_at, *chunk),
            )
        return int(inserted["row_id"])

    def _pending_holder(self, record: CallRecord) -> CallRecord | None:
        row = self.db.execute(
            f"SELECT {COLUMNS} FROM calls WHERE status = 'pending' AND tenant = ?"
            " AND (intent_key = ? OR (scope = ? AND idempotency_key = ?)) LIMIT 1",
            (record.tenant, record.intent_key, record.scope, record.idempotency_key),
        ).one()
        return None if row is None else record_from_row(row)

    def complete(self, tenant: str, call_id: str, outcome: Outcome, now: float) -> CallRecord:
        """Record a call's outcome; repeating the same outcome is a no-op."""
        db = self.db
        with db.write():
            # Locked (on PostgreSQL) until the commit: two reports of one call take turns.
            current = db.execute(
                f"SELECT {COLUMNS} FROM calls WHERE call_id = ? AND tenant = ?"
                f"{db.dialect.for_update}",
                (call_id, tenant),
            ).one()
            if current is None:
                raise NotFound(f"no call with id {call_id!r}")
            record = record_from_row(current)
            if not may_complete(record, outcome):
                raise Conflict(
                    f"call {call_id} is already {describe(record)};"
                    f" it cannot become {describe_outcome(outcome)}"
                )
            if record.status is outcome.status and record.failure_class is outcome.failure_class:
                # A repeated report is a no-op; the same status with another result is not.
                same = (dumps(record.result), dumps(record.error)) == (
                    dumps(outcome.result),
                    dumps(outcome.error),
                )
                if not same:
                    raise Conflict(
                        f"call {call_id} is already {describe(record)} with another result;"
                        " a stored outcome is never replaced"
                    )
                return record
            updated = db.execute(
                "UPDATE calls SET status = ?, failure_class = ?, result_json = ?, error_json = ?,"
                f" completed_at = ? WHERE call_id = ? RETURNING {COLUMNS}",
                (
                    outcome.status.value,
                    None if outcome.failure_class is None else outcome.failure_class.value,
                    dumps(outcome.result),
                    dumps(outcome.error),
                    now,
                    call_id,
                ),
            ).one()
            assert updated is not None
            return record_from_row(updated)

    def extend_lease(self, tenant: str, call_id: str, until: float, now: float) -> CallRecord:
        """Move a pending, unexpired claim's lease to ``until`` (never earlier)."""
        db = self.db
        with db.write():
            # Locked (on PostgreSQL) until the commit: a completion or a checker takes turns.
            current = db.execute(
                f"SELECT {COLUMNS} FROM calls WHERE call_id = ? AND tenant = ?"
                f"{db.dialect.for_update}",
                (call_id, tenant),
            ).one()
            if current is None:
                raise NotFound(f"no call with id {call_id!r}")
            record = record_from_row(current)
            if record.status is not CallStatus.PENDING:
                raise Conflict(
                    f"call {call_id} is already {describe(record)}; only a pending claim has a"
                    " lease"
                )
            if now >= record.lease_expires_at:
                raise LeaseExpired(
                    f"the lease of call {call_id} ran out; later checks of it are told to reconcile"
                )
            if until <= record.lease_expires_at:
                return record
            updated = db.execute(
                f"UPDATE calls SET lease_expires_at = ? WHERE call_id = ? RETURNING {COLUMNS}",
                (until, call_id),
            ).one()
            assert updated is not None
            return record_from_row(updated)

    def get(self, tenant: str, call_id: str) -> CallRecord | None:
        """One of ``tenant``'s calls by id."""
        found = self.db.execute(
            f"SELECT {COLUMNS} FROM calls WHERE call_id = ? AND tenant = ?", (call_id, tenant)
        ).one()
        return None if found is None else record_from_row(found)

    def session_calls(
        self, tenant: str, session_id: str, limit: int, offset: int
    ) -> list[CallRecord]:
        """One of ``tenant``'s sessions' calls, oldest first."""
        rows = self.db.execute(
            f"SELECT {COLUMNS} FROM calls WHERE session_id = ? AND tenant = ?"
            " ORDER BY row_id LIMIT ? OFFSET ?",
            (session_id, tenant, limit, offset),
        ).rows
        return [record_from_row(r) for r in rows]

    def purge(self, before: float, longer: Mapping[str, float] | None = None) -> int:
        """Delete calls created before ``before``, and the keys and vectors only they used;
        a tenant in ``longer`` keeps its calls and keys until its own cut-off there."""
        longer = dict(longer or {})
        cutoffs: list[tuple[float, str, tuple[str, ...]]] = [(before, "", ())]
        if longer:
            marks = ",".join("?" * len(longer))
            cutoffs[0] = (before, f" AND tenant NOT IN ({marks})", tuple(longer))
            cutoffs += [(cut, " AND tenant = ?", (tenant,)) for tenant, cut in longer.items()]
        removed = 0
        for cut, only, params in cutoffs:
            removed += self._delete_batches("calls", "row_id", "created_at", cut, only, params)
            for table in ("idempotency_keys", "attempt_tokens"):
                self._delete_batches(table, "tenant, scope, key", "created_at", cut, only, params)
        # A vector not needed by a call claimed since ``before`` serves no stored call (and
        # one a longer-kept call needs again is embedded again).
        self._delete_batches("embeddings", "model, text_hash", "used_at", before)
        return removed

    def _delete_batches(
        self,
        table: str,
        key: str,
        column: str,
        before: float,
        only: str = "",
        params: tuple[str, ...] = (),
    ) -> int:
        """Delete old rows a batch per short transaction: a large backlog never holds the
        write lock (or, on PostgreSQL, row locks other purgers wait on) for long."""
        removed = 0
        while True:
            with self.db.write():
                count = self.db.execute(
                    f"DELETE FROM {table} WHERE ({key}) IN"
                    f" (SELECT {key} FROM {table} WHERE {column} < ?{only} LIMIT ?)",
                    (before, *params, _PURGE_BATCH),
                ).rowcount
            removed += max(0, count)
            if count < _PURGE_BATCH:
                return removed

    def load_policies(self) -> dict[str, dict[str, dict[str, Any]]]:
        """Stored per-tool policy overrides, by tenant, then tool."""
        rows = self.db.execute("SELECT tenant, tool, policy_json FROM policies").rows
        stored: dict[str, dict[str, dict[str, Any]]] = {}
        for row in rows:
            stored.setdefault(row["tenant"], {})[row["tool"]] = json.loads(row["policy_json"])
        return stored

    def save_policy(self, tenant: str, tool: str, data: dict[str, Any]) -> None:
        """Store one of ``tenant``'s tool policies."""
        now = time.time()  # when it was saved, for people; nothing compares it
        with self.db.write():  # durable once acknowledged, on PostgreSQL too
            self.db.execute(
                "INSERT INTO policies (tenant, tool, policy_json, updated_at) VALUES (?, ?, ?, ?)"
                " ON CONFLICT (tenant, tool) DO UPDATE SET policy_json = excluded.policy_json,"
                " updated_at = excluded.updated_at",
                (tenant, tool, canonical_json(data), now),
            )

    def close(self) -> None:
        """Release the database's connections."""
        self.db.close()


def _newest_call(
    scope: Scope,
    tool: str,
    lookup: Lookup,
    digest: str,
    since: float,
    step: tuple[str, str] | None,
) -> tuple[str, tuple[Any, ...]]:
    """The statement (and its parameters) that reads the newest live call of this scope,
    tool and step whose ``lookup`` hash is ``digest``, through the index of that hash."""
    where, params = _step_filter(step)
    sql = (
        f"SELECT {COLUMNS} FROM calls WHERE scope = ? AND tool = ? AND tenant = ?"
        f" AND {LIVE}{where}{_LOOKUP_SQL[lookup]}"
        " ORDER BY created_at DESC, row_id DESC LIMIT 1"
    )
    return sql, (scope.name, tool, scope.tenant, since, *params, digest)


def _step_filter(step: tuple[str, str] | None) -> tuple[str, tuple[str, ...]]:
    """SQL that keeps only calls of one (run id, step), when the check names one."""
    if step is None:
        return "", ()
    return " AND COALESCE(run_id, '') = ? AND COALESCE(step, '') = ?", step
