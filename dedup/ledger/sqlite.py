"""The default ledger: one SQLite file in WAL mode."""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from tooldedup.dedup.canonical import canonical_json, sent_hash, stable_hash
from tooldedup.dedup.errors import Conflict, NotFound
from tooldedup.dedup.ledger.base import ClaimConflict, KeyBinding, Lookup
from tooldedup.dedup.ledger.rows import (
    COLUMNS,
    LIVE,
    describe,
    describe_outcome,
    dumps,
    may_complete,
    record_from_row,
    with_row_id,
)
from tooldedup.dedup.ledger.sqlite_log import SqliteLogStore
from tooldedup.dedup.records import CallRecord, CallStatus, Outcome

__all__ = ["SqliteLedger"]


_LOOKUP_SQL = {
    Lookup.ARGS: " AND args_hash = ?",
    Lookup.SENT: " AND sent_hash = ?",
    Lookup.LEGACY: " AND sent_args_json IS NULL AND args_hash = ?",
}


class SqliteLedger(SqliteLogStore):
    """Calls, outcomes, policies and the decision log in one SQLite file."""

    _legacy: bool | None = None

    def candidates(
        self,
        scope: str,
        tool: str,
        exact_signature: str,
        since: float,
        limit: int,
        step: tuple[str, str] | None = None,
    ) -> list[CallRecord]:
        """Live calls sharing scope, tool and exact signature (and step), newest first."""
        where, params = _step_filter(step)
        rows = self._conn().execute(
            f"SELECT {COLUMNS} FROM calls WHERE scope = ? AND tool = ? AND exact_sig = ?"
            f" AND {LIVE}{where} ORDER BY created_at DESC, row_id DESC LIMIT ?",
            (scope, tool, exact_signature, since, *params, limit),
        )
        return [record_from_row(r) for r in rows]

    def exact_match(
        self,
        scope: str,
        tool: str,
        digest: str,
        since: float,
        step: tuple[str, str] | None = None,
        lookup: Lookup = Lookup.ARGS,
    ) -> CallRecord | None:
        """The newest live call whose ``lookup`` hash is ``digest``, by index, not by scan."""
        where, params = _step_filter(step)
        where += _LOOKUP_SQL[lookup]
        row = (
            self._conn()
            .execute(
                f"SELECT {COLUMNS} FROM calls WHERE scope = ? AND tool = ? AND {LIVE}{where}"
                " ORDER BY created_at DESC, row_id DESC LIMIT 1",
                (scope, tool, since, *params, digest),
            )
            .fetchone()
        )
        return None if row is None else record_from_row(row)

    def has_legacy_calls(self) -> bool:
        """Whether rows written by release 0.1 (no args as sent) are still stored."""
        if self._legacy is None or self._legacy:
            found = (
                self._conn()
                .execute("SELECT 1 FROM calls WHERE sent_args_json IS NULL LIMIT 1")
                .fetchone()
            )
            # Only purges remove them, and nothing writes them again: once gone, gone.
            self._legacy = found is not None
        return self._legacy

    def reserve_key(
        self, scope: str, key: str, binding: KeyBinding, now: float, since: float
    ) -> KeyBinding:
        """Bind ``key`` to this tool and intent unless it is bound inside the window.

        Returns the binding in force: this call's, or the earlier one's. One statement, so
        concurrent checks in any process agree on the first.
        """
        conn = self._conn()
        conn.execute(
            "INSERT INTO idempotency_keys (scope, key, tool, intent_key, sent_hash, created_at)"
            " VALUES (?,?,?,?,?,?) ON CONFLICT (scope, key) DO UPDATE SET tool = excluded.tool,"
            " intent_key = excluded.intent_key, sent_hash = excluded.sent_hash,"
            " created_at = excluded.created_at WHERE idempotency_keys.created_at < ?",
            (scope, key, binding.tool, binding.intent_key, binding.sent_hash, now, since),
        )
        row = conn.execute(
            "SELECT tool, intent_key, sent_hash FROM idempotency_keys WHERE scope = ? AND key = ?",
            (scope, key),
        ).fetchone()
        return KeyBinding(str(row["tool"]), str(row["intent_key"]), str(row["sent_hash"]))

    def checkpoint(self) -> None:
        """Fold the write-ahead log into the database, off the request path."""
        self._conn().execute("PRAGMA wal_checkpoint(PASSIVE)")

    def latest_attempt(self, record: CallRecord) -> CallRecord:
        """The newest retry in ``record``'s chain of attempts (``record`` if none)."""
        current = record
        for _ in range(1000):  # a chain is short; the bound only guards against a cycle
            row = (
                self._conn()
                .execute(
                    # A retry is claimed in its original's scope and tool: saying so lets the
                    # (scope, tool, created_at) index serve a lookup that would scan every call.
                    f"SELECT {COLUMNS} FROM calls WHERE scope = ? AND tool = ? AND attempt_of = ?"
                    " ORDER BY row_id DESC LIMIT 1",
                    (current.scope, current.tool, current.call_id),
                )
                .fetchone()
            )
            if row is None:
                break
            current = record_from_row(row)
        return current

    def recent(self, scope: str, tool: str, since: float, limit: int) -> list[CallRecord]:
        """Live calls of ``tool`` in ``scope``, newest first."""
        rows = self._conn().execute(
            f"SELECT {COLUMNS} FROM calls WHERE scope = ? AND tool = ? AND {LIVE}"
            " ORDER BY created_at DESC, row_id DESC LIMIT ?",
            (scope, tool, since, limit),
        )
        return [record_from_row(r) for r in rows]

    def by_idempotency_key(self, scope: str, key: str, since: float) -> CallRecord | None:
        """The newest call claimed with this explicit key."""
        row = (
            self._conn()
            .execute(
                f"SELECT {COLUMNS} FROM calls WHERE scope = ? AND idempotency_key = ?"
                " AND created_at >= ? ORDER BY row_id DESC LIMIT 1",
                (scope, key, since),
            )
            .fetchone()
        )
        return None if row is None else record_from_row(row)

    def claim(
        self, record: CallRecord, *, live_since: float | None = None
    ) -> CallRecord | ClaimConflict:
        """Store a pending claim; if ``record.attempt_of`` is set, retire that attempt.

        With ``live_since``, a live call of the same intent created since then (claimed by
        another process after this one looked) wins, and the claim is not stored.
        """
        conn = self._conn()
        conn.execute("BEGIN IMMEDIATE")
        try:
            if live_since is not None:
                # The intent key hashes scope and tool, so naming them changes no answer; it
                # lets the (scope, tool, created_at) index serve the lookup, which otherwise
                # walks every live call in the window (a full scan at 1M stored calls).
                holder = conn.execute(
                    f"SELECT {COLUMNS} FROM calls WHERE scope = ? AND tool = ?"
                    f" AND intent_key = ? AND {LIVE}"
                    " AND NOT (status = 'failed' AND failure_class = 'retryable')"
                    " ORDER BY row_id DESC LIMIT 1",
                    (record.scope, record.tool, record.intent_key, live_since),
                ).fetchone()
                if holder is not None:
                    conn.execute("ROLLBACK")
                    return ClaimConflict(record_from_row(holder))
            cursor = conn.execute(
                "INSERT INTO calls (call_id, scope, session_id, tool, args_json, args_hash,"
                " exact_sig, exact_leaves, semantic_leaves, intent_key, idempotency_key, status,"
                " created_at, lease_expires_at, attempt_of, run_id, step, sent_args_json,"
                " sent_hash) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
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
                ),
            )
            if record.attempt_of is not None:
                conn.execute(
                    "UPDATE calls SET superseded = 1 WHERE call_id = ?", (record.attempt_of,)
                )
            # A stored call keeps its texts' vectors from being purged with older calls.
            hashes = sorted({stable_hash(leaf.text) for leaf in record.semantic_leaves})
            for start in range(0, len(hashes), 500):
                chunk = hashes[start : start + 500]
                conn.execute(
                    "UPDATE embeddings SET used_at = ?"
                    f" WHERE text_hash IN ({','.join('?' * len(chunk))})",
                    (record.created_at, *chunk),
                )
            conn.execute("COMMIT")
        except sqlite3.IntegrityError:
            conn.execute("ROLLBACK")
            holder = self._pending_holder(record)
            if holder is None:
                raise
            return ClaimConflict(holder)
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        row_id = cursor.lastrowid
        assert row_id is not None
        return with_row_id(record, row_id)

    def _pending_holder(self, record: CallRecord) -> CallRecord | None:
        row = (
            self._conn()
            .execute(
                f"SELECT {COLUMNS} FROM calls WHERE status = 'pending' AND"
                " (intent_key = ? OR (scope = ? AND idempotency_key = ?)) LIMIT 1",
                (record.intent_key, record.scope, record.idempotency_key),
            )
            .fetchone()
        )
        return None if row is None else record_from_row(row)

    def complete(self, call_id: str, outcome: Outcome, now: float) -> CallRecord:
        """Record a call's outcome; repeating the same outcome is a no-op."""
        conn = self._conn()
        conn.execute("BEGIN IMMEDIATE")
        try:
            row = conn.execute(f"SELECT {COLUMNS} FROM calls WHERE call_id = ?", (call_id,))
            current = row.fetchone()
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
                conn.execute("COMMIT")
                return record
            conn.execute(
                "UPDATE calls SET status = ?, failure_class = ?, result_json = ?, error_json = ?,"
                " completed_at = ? WHERE call_id = ?",
                (
                    outcome.status.value,
                    None if outcome.failure_class is None else outcome.failure_class.value,
                    dumps(outcome.result),
                    dumps(outcome.error),
                    now,
                    call_id,
                ),
            )
            updated = conn.execute(f"SELECT {COLUMNS} FROM calls WHERE call_id = ?", (call_id,))
            result = record_from_row(updated.fetchone())
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        return result

    def get(self, call_id: str) -> CallRecord | None:
        """One call by id."""
        row = self._conn().execute(f"SELECT {COLUMNS} FROM calls WHERE call_id = ?", (call_id,))
        found = row.fetchone()
        return None if found is None else record_from_row(found)

    def session_calls(self, session_id: str, limit: int, offset: int) -> list[CallRecord]:
        """A session's calls, oldest first."""
        rows = self._conn().execute(
            f"SELECT {COLUMNS} FROM calls WHERE session_id = ? ORDER BY row_id LIMIT ? OFFSET ?",
            (session_id, limit, offset),
        )
        return [record_from_row(r) for r in rows]

    def purge(self, before: float) -> int:
        """Delete calls created before ``before``, and the keys and vectors only they used."""
        conn = self._conn()
        conn.execute("BEGIN IMMEDIATE")
        try:
            removed = conn.execute("DELETE FROM calls WHERE created_at < ?", (before,)).rowcount
            conn.execute("DELETE FROM idempotency_keys WHERE created_at < ?", (before,))
            # A vector not needed by a call claimed since ``before`` serves no stored call.
            conn.execute("DELETE FROM embeddings WHERE used_at < ?", (before,))
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        return int(removed)

    def load_policies(self) -> dict[str, dict[str, Any]]:
        """Stored per-tool policy overrides."""
        rows = self._conn().execute("SELECT tool, policy_json FROM policies")
        return {tool: json.loads(text) for tool, text in rows}

    def save_policy(self, tool: str, data: dict[str, Any]) -> None:
        """Store one tool's policy."""
        self._conn().execute(
            "INSERT INTO policies (tool, policy_json, updated_at) VALUES (?, ?, julianday('now'))"
            " ON CONFLICT (tool) DO UPDATE SET policy_json = excluded.policy_json,"
            " updated_at = excluded.updated_at",
            (tool, canonical_json(data)),
        )


def _step_filter(step: tuple[str, str] | None) -> tuple[str, tuple[str, ...]]:
    """SQL that keeps only calls of one (run id, step), when the check names one."""
    if step is None:
        return "", ()
    return " AND IFNULL(run_id, '') = ? AND IFNULL(step, '') = ?", step
