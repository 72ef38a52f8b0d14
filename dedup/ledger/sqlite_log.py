"""The decision log and its labels in the ledger's SQLite file."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator

from tooldedup.dedup.canonical import canonical_json, stable_hash
from tooldedup.dedup.errors import NotFound
from tooldedup.dedup.ledger.base import Feedback, LogEntry
from tooldedup.dedup.ledger.connections import SqliteConnections
from tooldedup.dedup.ledger.rows import feedback_from_row, log_entry_from_row

__all__ = ["SqliteLogStore"]


class SqliteLogStore(SqliteConnections):
    """Append-only decision log entries, feedback labels and the matches labels rule out."""

    def append_log(self, entry: LogEntry) -> None:
        """Append one decision log entry."""
        self._conn().execute(
            "INSERT INTO decisions (check_id, ts, scope, session_id, tool, args_json, decision,"
            " stage, score, call_id, matched_call_id, latency_ms, dry_run, explain_json,"
            " borderline) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (
                entry.check_id,
                entry.ts,
                entry.scope,
                entry.session_id,
                entry.tool,
                canonical_json(entry.args),
                entry.decision,
                entry.stage,
                entry.score,
                entry.call_id,
                entry.matched_call_id,
                entry.latency_ms,
                int(entry.dry_run),
                canonical_json(entry.explain),
                int(entry.borderline),
            ),
        )

    def iter_log(self) -> Iterator[LogEntry]:
        """Every decision log entry, oldest first, with its latest feedback."""
        # A connection of its own, so a long export never holds a request thread's cursor.
        conn = sqlite3.connect(self._path, timeout=30)
        conn.row_factory = sqlite3.Row
        latest = (
            "SELECT f.* FROM feedback f WHERE f.row_id IN"
            " (SELECT MAX(row_id) FROM feedback GROUP BY check_id)"
        )
        try:
            labels = {row["check_id"]: feedback_from_row(row) for row in conn.execute(latest)}
            for row in conn.execute("SELECT * FROM decisions ORDER BY row_id"):
                yield log_entry_from_row(row, labels.get(row["check_id"]))
        finally:
            conn.close()

    def add_feedback(
        self, check_id: str, label: str, note: str | None, source: str, now: float
    ) -> Feedback:
        """Label a logged check; a 'distinct' label on a match rules that match out."""
        conn = self._conn()
        conn.execute("BEGIN IMMEDIATE")
        try:
            row = conn.execute(
                "SELECT scope, tool, args_json, matched_call_id FROM decisions WHERE check_id = ?",
                (check_id,),
            ).fetchone()
            if row is None:
                raise NotFound(f"no check with id {check_id!r}")
            conn.execute(
                "INSERT INTO feedback (check_id, label, note, source, ts) VALUES (?,?,?,?,?)",
                (check_id, label, note, source, now),
            )
            # A judge's label is for calibration only; it never changes what is served.
            rules_out = label == "distinct" and source != "judge"
            excluded = row["matched_call_id"] if rules_out else None
            if excluded is not None:
                conn.execute(
                    "INSERT OR IGNORE INTO excluded_matches VALUES (?,?,?,?)",
                    (row["scope"], row["tool"], stable_hash(row["args_json"]), excluded),
                )
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        return Feedback(check_id, label, note, source, now, excluded)

    def excluded_matches(self, scope: str, tool: str, args_hash: str) -> frozenset[str]:
        """Calls that feedback said this exact proposal does not duplicate."""
        rows = self._conn().execute(
            "SELECT call_id FROM excluded_matches WHERE scope = ? AND tool = ? AND args_hash = ?",
            (scope, tool, args_hash),
        )
        return frozenset(call_id for (call_id,) in rows)

    def purge_log(self, before: float) -> int:
        """Delete log entries written before ``before``, with their labels; return how many."""
        conn = self._conn()
        conn.execute("BEGIN IMMEDIATE")
        try:
            conn.execute(
                "DELETE FROM feedback WHERE check_id IN"
                " (SELECT check_id FROM decisions WHERE ts < ?)",
                (before,),
            )
            removed = conn.execute("DELETE FROM decisions WHERE ts < ?", (before,)).rowcount
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        return removed
