"""The decision log and its labels, in the ledger's database."""

from __future__ import annotations

from collections.abc import Iterator

from tooldedup.dedup.canonical import canonical_json, stable_hash
from tooldedup.dedup.errors import NotFound
from tooldedup.dedup.ledger.base import Feedback, LogEntry
from tooldedup.dedup.ledger.database import Database
from tooldedup.dedup.ledger.rows import feedback_from_row, log_entry_from_row

__all__ = ["SqlLogStore"]

_EXPORT_BATCH = 1000


class SqlLogStore:
    """Append-only decision log entries, feedback labels and the matches labels rule out."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def append_log(self, entry: LogEntry) -> None:
        """Append one decision log entry."""
        self.db.execute(
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
        latest = (
            "SELECT f.* FROM feedback f WHERE f.row_id IN"
            " (SELECT MAX(row_id) FROM feedback GROUP BY check_id)"
        )
        labels = {row["check_id"]: feedback_from_row(row) for row in self.db.execute(latest).rows}
        # Page by row id: a long export holds no cursor or transaction open between pages.
        after = 0
        while True:
            rows = self.db.execute(
                "SELECT * FROM decisions WHERE row_id > ? ORDER BY row_id LIMIT ?",
                (after, _EXPORT_BATCH),
            ).rows
            for row in rows:
                yield log_entry_from_row(row, labels.get(row["check_id"]))
            if len(rows) < _EXPORT_BATCH:
                return
            after = rows[-1]["row_id"]

    def add_feedback(
        self, check_id: str, label: str, note: str | None, source: str, now: float
    ) -> Feedback:
        """Label a logged check; a 'distinct' label on a match rules that match out."""
        db = self.db
        with db.write():
            row = db.execute(
                "SELECT scope, tool, args_json, matched_call_id FROM decisions WHERE check_id = ?",
                (check_id,),
            ).one()
            if row is None:
                raise NotFound(f"no check with id {check_id!r}")
            db.execute(
                "INSERT INTO feedback (check_id, label, note, source, ts) VALUES (?,?,?,?,?)",
                (check_id, label, note, source, now),
            )
            # A judge's label is for calibration only; it never changes what is served.
            rules_out = label == "distinct" and source != "judge"
            excluded = row["matched_call_id"] if rules_out else None
            if excluded is not None:
                db.execute(
                    "INSERT INTO excluded_matches (scope, tool, args_hash, call_id)"
                    " VALUES (?,?,?,?) ON CONFLICT DO NOTHING",
                    (row["scope"], row["tool"], stable_hash(row["args_json"]), excluded),
                )
        return Feedback(check_id, label, note, source, now, excluded)

    def excluded_matches(self, scope: str, tool: str, args_hash: str) -> frozenset[str]:
        """Calls that feedback said this exact proposal does not duplicate."""
        rows = self.db.execute(
            "SELECT call_id FROM excluded_matches WHERE scope = ? AND tool = ? AND args_hash = ?",
            (scope, tool, args_hash),
        ).rows
        return frozenset(row["call_id"] for row in rows)

    def purge_log(self, before: float) -> int:
        """Delete log entries written before ``before``, with their labels; return how many."""
        with self.db.write():
            self.db.execute(
                "DELETE FROM feedback WHERE check_id IN"
                " (SELECT check_id FROM decisions WHERE ts < ?)",
                (before,),
            )
            removed = self.db.execute("DELETE FROM decisions WHERE ts < ?", (before,)).rowcount
        return removed
