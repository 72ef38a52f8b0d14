"""Mapping between database rows and ledger records, and the completion rules."""

from __future__ import annotations

import json
import threading
from dataclasses import replace
from typing import Any

from tooldedup.dedup.canonical import canonical_json
from tooldedup.dedup.ledger.base import Feedback, LogEntry
from tooldedup.dedup.ledger.database import Row
from tooldedup.dedup.records import CallRecord, CallStatus, FailureClass, Outcome, SemanticLeaf

__all__ = [
    "COLUMNS",
    "LIVE",
    "ParsedRecords",
    "describe",
    "describe_outcome",
    "dumps",
    "feedback_from_row",
    "log_entry_from_row",
    "may_complete",
    "record_from_row",
    "with_row_id",
]

COLUMNS = (
    "row_id, call_id, scope, session_id, tool, args_json, args_hash, exact_sig, exact_leaves,"
    " semantic_leaves, intent_key, idempotency_key, status, failure_class, result_json,"
    " error_json, created_at, lease_expires_at, completed_at, attempt_of, run_id, step,"
    " sent_args_json, attempt_token, tenant"
)
LIVE = "superseded = 0 AND created_at >= ?"


def dumps(value: Any) -> str | None:
    """Canonical JSON text, or None for None."""
    return None if value is None else canonical_json(value)


def loads(text: str | None) -> Any:
    """The value of a JSON column, or None."""
    return None if text is None else json.loads(text)


def record_from_row(row: Row) -> CallRecord:
    """A ``calls`` row as a record; rows from before 0.2 read back their canonical args."""
    args = json.loads(row["args_json"])
    sent = row["sent_args_json"]
    return CallRecord(
        row_id=row["row_id"],
        call_id=row["call_id"],
        scope=row["scope"],
        session_id=row["session_id"],
        tool=row["tool"],
        args=args,
        args_hash=row["args_hash"],
        exact_signature=row["exact_sig"],
        exact_leaves=tuple((p, v) for p, v in json.loads(row["exact_leaves"])),
        semantic_leaves=tuple(SemanticLeaf(p, t) for p, t in json.loads(row["semantic_leaves"])),
        intent_key=row["intent_key"],
        idempotency_key=row["idempotency_key"],
        status=CallStatus(row["status"]),
        failure_class=None if row["failure_class"] is None else FailureClass(row["failure_class"]),
        result=loads(row["result_json"]),
        error=loads(row["error_json"]),
        created_at=row["created_at"],
        lease_expires_at=row["lease_expires_at"],
        completed_at=row["completed_at"],
        attempt_of=row["attempt_of"],
        run_id=row["run_id"],
        step=row["step"],
        sent_args=args if sent is None else json.loads(sent),
        attempt_token=row["attempt_token"],
        tenant=row["tenant"],
    )


_COLUMN_NAMES = tuple(name.strip() for name in COLUMNS.split(","))


class ParsedRecords:
    """``calls`` rows as records, each row parsed once while it stays the same.

    A session's candidates come back at every check of that session; parsing their JSON
    columns again each time cost more than reading them. A row that changed (completed,
    superseded, its lease extended) differs in some column and is parsed again. Records are
    shared between checks: their JSON values are read, never changed. Rows whose JSON
    columns hold more than ``max_row_chars`` are parsed each time, and the memo is emptied
    once it holds ``max_chars`` in all, so it stays small whatever calls are stored.
    """

    def __init__(self, *, max_row_chars: int = 16_384, max_chars: int = 16 << 20) -> None:
        if max_row_chars < 0 or max_chars < max_row_chars:
            raise ValueError("max_row_chars must be at least 0 and at most max_chars")
        self._max_row_chars = max_row_chars
        self._max_chars = max_chars
        self._chars = 0
        self._parsed: dict[str, tuple[tuple[Any, ...], CallRecord]] = {}
        self._lock = threading.Lock()

    def record(self, row: Row) -> CallRecord:
        """The record of ``row``: the one parsed before if the row is unchanged."""
        values = tuple(row[name] for name in _COLUMN_NAMES)
        call_id = row["call_id"]
        with self._lock:
            known = self._parsed.get(call_id)
        if known is not None and known[0] == values:
            return known[1]
        record = record_from_row(row)
        size = sum(len(v) for v in values if isinstance(v, str))
        if size > self._max_row_chars:
            return record
        with self._lock:
            if self._chars + size > self._max_chars:
                # Dropped whole, not one by one: rows are parsed again at a few µs each.
                self._parsed.clear()
                self._chars = 0
            old = self._parsed.get(call_id)
            if old is not None:
                self._chars -= sum(len(v) for v in old[0] if isinstance(v, str))
            self._parsed[call_id] = (values, record)
            self._chars += size
        return record


# Which completions may follow which state: pending may end any way; an unknown or
# ambiguous outcome may later be reconciled to a definite one.
_OPEN = (CallStatus.PENDING, CallStatus.UNKNOWN)


def log_entry_from_row(row: Row, feedback: Feedback | None) -> LogEntry:
    """A ``decisions`` row as a log entry, with its latest label."""
    return LogEntry(
        check_id=row["check_id"],
        ts=row["ts"],
        scope=row["scope"],
        session_id=row["session_id"],
        tool=row["tool"],
        args=json.loads(row["args_json"]),
        decision=row["decision"],
        stage=row["stage"],
        score=row["score"],
        call_id=row["call_id"],
        matched_call_id=row["matched_call_id"],
        latency_ms=row["latency_ms"],
        dry_run=bool(row["dry_run"]),
        explain=json.loads(row["explain_json"]),
        feedback=feedback,
        borderline=bool(row["borderline"]),
        tenant=row["tenant"],
        key_id=row["key_id"],
        observed=row["observed"],
        ask_expires_at=row["ask_expires_at"],
    )


def feedback_from_row(row: Row) -> Feedback:
    """A ``feedback`` row as a record."""
    return Feedback(
        row["check_id"], row["label"], row["note"], row["source"], row["ts"], key_id=row["key_id"]
    )


def may_complete(record: CallRecord, outcome: Outcome) -> bool:
    """Whether ``outcome`` may follow the call's current state."""
    if record.status is outcome.status and record.failure_class is outcome.failure_class:
        return True
    if record.status in _OPEN:
        return True
    return record.status is CallStatus.FAILED and record.failure_class is FailureClass.AMBIGUOUS


def describe(record: CallRecord) -> str:
    """The call's state in words, for error messages."""
    if record.failure_class is None:
        return record.status.value
    return f"{record.status.value} ({record.failure_class.value})"


def describe_outcome(outcome: Outcome) -> str:
    """An outcome in words, for error messages."""
    if outcome.failure_class is None:
        return outcome.status.value
    return f"{outcome.status.value} ({outcome.failure_class.value})"


def with_row_id(record: CallRecord, row_id: int) -> CallRecord:
    """The record with the row id the database gave it."""
    return replace(record, row_id=row_id)
