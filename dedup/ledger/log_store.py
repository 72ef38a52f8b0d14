"""The decision log and its labels, in the ledger's database."""

from __future__ import annotations

from collections.abc import Iterator

from tooldedup.dedup.canonical import canonical_json, stable_hash
from tooldedup.dedup.errors import NotFound
from tooldedup.dedup.ledger.base import Feedback, LogEntry
from tooldedup.dedup.ledger.database import Database
from tooldedup.dedup.ledger.rows import feedback_from_row, log_entry_from_row
from tooldedup.dedup.records import Scope

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
            " borderline, tenant, key_id) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
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
                entry.tenant,
                entry.key_id,
            ),
        )

    def iter_log(self, tenant: str | None = None) -> Iterator[LogEntry]:
        """Every decision log entry (of one tenant, if named), oldest first, with its latest
        feedback."""
        only, params = ("", ()) if tenant is None else (" AND tenant = ?", (tenant,))
        latest = (
            "SELECT f.* FROM feedback f WHERE f.row_id IN"
            " (SELECT MAX(row_id) FROM feedback GROUP BY check_id)"
        )
        labels = {row["check_id"]: feedback_from_row(row) for row in self.db.execute(latest).rows}
        # Page by row id: a long export holds no cursor or transaction open between pages.
        after = 0
        while True:
            rows = self.db.execute(
                f"SELECT * FROM decisions WHERE row_id > ?{only} ORDER BY row_id LIMIT ?",
                (after, *params, _EXPORT_BATCH),
            ).rows
            for row in rows:
                yield log_entry_from_row(row, labels.get(row["check_id"]))
            if len(rows) < _EXPORT_BATCH:
                return
            after = rows[-1]["row_id"]

    def log_page(
        self,
        tenant: str,
        limit: int,
        before: str | None = None,
        tool: str | None = None,
        decision: str | None = None,
    ) -> list[LogEntry]:
        """``tenant``'s newest log entries, after (older than) the check ``before``, each
        with its latest label. An unknown or another tenant's ``before`` gives none."""
        where = ["tenant = ?"]
        params: list[object] = [tenant]
        if before is not None:
            where.append(
                "row_id < (SELECT row_id FROM decisions WHERE check_id = ? AND tenant = ?)"
            )
            params += [before, tenant]
        for column, value in (("tool =", tool), ("decision =", decision)):
            if value is not None:
                where.append(f"{column} ?")
                params.append(value)
        rows = self.db.execute(
            f"SELECT * FROM decisions WHERE {' AND '.join(where)} ORDER BY row_id DESC LIMIT ?",
            (*params, limit),
        ).rows
        labels: dict[str, Feedback] = {}
        if rows:
            marks = ",".join("?" * len(rows))
            found = self.db.execute(
                f"SELECT * FROM feedback WHERE check_id IN ({marks}) ORDER BY row_id",
                [row["check_id"] for row in rows],
            ).rows
            labels = {row["check_id"]: feedback_from_row(row) for row in found}
        return [log_entry_from_row(row, labels.get(row["check_id"])) for row in rows]

    def add_feedback(
        self,
        tenant: str,
        check_id: str,
        label: str,
        note: str | None,
        source: str,
        now: float,
        key_id: str | None = None,
    ) -> Feedback:
        """Label one of ``tenant``'s logged checks; a 'distinct' label on a match rules that
        match out."""
        db = self.db
        with db.write():
            row = db.execute(
                "SELECT scope, tool, args_json, matched_call_id FROM decisions"
                " WHERE check_id = ? AND tenant = ?",
                (check_id, tenant),
            ).one()
            if row is None:
                raise NotFound(f"no check with id {check_id!r}")
            db.execute(
                "INSERT INTO feedback (check_id, label, note, source, ts, key_id)"
                " VALUES (?,?,?,?,?,?)",
                (check_id, label, note, source, now, key_id),
            )
            # A judge's label is for calibration only; it never changes what is served.
            rules_out = label == "distinct" and source != "judge"
            excluded = row["matched_call_id"] if rules_out else None
            if excluded is not None:
                db.execute(
                    "INSERT INTO excluded_matches (scope, tool, args_hash, call_id, tenant)"
                    " VALUES (?,?,?,?,?) ON CONFLICT DO NOTHING",
                    (row["scope"], row["tool"], stable_hash(row["args_json"]), excluded, tenant),
                )
        return Feedback(check_id, label, note, source, now, excluded, key_id)

    def excluded_matches(self, scope: Scope, tool: str, args_hash: str) -> frozenset[str]:
        """Calls that feedback said this exact proposal does not duplicate."""
        rows = self.db.execute(
            "SELECT call_id FROM excluded_matches WHERE scope = ? AND tool = ? AND args_hash = ?"
            " AND tenant = ?",
            (scope.name, tool, args_hash, scope.tenant),
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
