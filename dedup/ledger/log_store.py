"""The decision log and its labels, in the ledger's database."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from tooldedup.dedup.canonical import canonical_json, stable_hash
from tooldedup.dedup.errors import NotFound
from tooldedup.dedup.ledger.base import Feedback, LogEntry, LogQuery
from tooldedup.dedup.ledger.database import SQLITE, Database, Row
from tooldedup.dedup.ledger.group_commit import GroupCommit
from tooldedup.dedup.ledger.rows import feedback_from_row, log_entry_from_row

__all__ = ["SqlLogStore"]

_EXPORT_BATCH = 1000
_INSERT_LOG = (
    "INSERT INTO decisions (check_id, ts, scope, session_id, tool, args_json, decision,"
    " stage, score, call_id, matched_call_id, latency_ms, dry_run, explain_json,"
    " borderline, tenant, key_id, observed, ask_expires_at)"
    " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)"
)


def _log_row(entry: LogEntry) -> tuple[Any, ...]:
    return (
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
        entry.observed,
        entry.ask_expires_at,
    )


class SqlLogStore:
    """Append-only decision log entries, feedback labels and the matches labels rule out."""

    def __init__(self, db: Database) -> None:
        self.db = db
        self._log_rows = GroupCommit(self._insert_log_rows)

    def append_log(self, entry: LogEntry) -> None:
        """Append one decision log entry (in a transaction shared with concurrent ones)."""
        if self.db.in_write():
            # Inside the caller's own transaction: the line is part of it. Another thread
            # writing the shared batch would wait for this transaction's lock meanwhile.
            self.db.execute(_INSERT_LOG, _log_row(entry))
            return
        self._log_rows.add(_log_row(entry))

    def _insert_log_rows(self, rows: Sequence[tuple[Any, ...]]) -> None:
        if len(rows) == 1:
            self.db.execute(_INSERT_LOG, rows[0])
        elif self.db.dialect is SQLITE:
            # One transaction: each commit rewrites a page of every index of the table.
            with self.db.write():
                self.db.executemany(_INSERT_LOG, rows)
        else:
            # PostgreSQL sends them in one pipeline; a transaction there would wait for the
            # WAL flush, which log lines do not (synchronous_commit is off for them).
            self.db.executemany(_INSERT_LOG, rows)

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

    def log_page(self, query: LogQuery) -> list[LogEntry]:
        """The log entries ``query`` asks for, newest first, each with its latest label.

        Every filter is a column of an index that starts with the tenant, so a page costs
        about its own size whatever the log holds. With a time filter, entries come in the
        order checks arrived (the (tenant, ts) index), otherwise in the order they were
        logged. An unknown or another tenant's ``before`` gives no entries.
        """
        where, params = _filters(query)
        timed = query.since is not None or query.until is not None
        if query.before is not None:
            cursor = "(SELECT {} FROM decisions WHERE check_id = ? AND tenant = ?)"
            if timed:
                # (ts, row_id) before the cursor's, spelled so that the ts index serves it.
                where.append(
                    f"ts <= {cursor.format('ts')} AND (ts < {cursor.format('ts')}"
                    f" OR row_id < {cursor.format('row_id')})"
                )
                params += [query.before, query.tenant] * 3
            else:
                where.append(f"row_id < {cursor.format('row_id')}")
                params += [query.before, query.tenant]
        order = "ts DESC, row_id DESC" if timed else "row_id DESC"
        source = "decisions"
        if query.labelled:
            # Labels are few: start from them. SQLite joins a CROSS JOIN in the order
            # written, whatever it guesses about the tables' sizes.
            source = "(SELECT DISTINCT check_id AS labelled FROM feedback) l CROSS JOIN decisions"
            where.append("decisions.check_id = l.labelled")
        rows = self.db.execute(
            f"SELECT decisions.* FROM {source} WHERE {' AND '.join(where)}"
            f" ORDER BY {order} LIMIT ?",
            (*params, query.limit),
        ).rows
        return self._with_labels(rows)

    def log_entry(self, tenant: str, check_id: str) -> LogEntry | None:
        """One of ``tenant``'s log entries, with its latest label."""
        rows = self.db.execute(
            "SELECT * FROM decisions WHERE check_id = ? AND tenant = ?", (check_id, tenant)
        ).rows
        found = self._with_labels(rows)
        return found[0] if found else None

    def traffic(self, tenant: str, since: float, bucket_seconds: int) -> list[Row]:
        """``tenant``'s checks since ``since``, counted per time bucket, decision, stage and
        tool (columns bucket, decision, stage, tool, n), in the database."""
        # Both round toward the bucket's start: times are positive.
        bucket = (
            "FLOOR(ts / ?)" if self.db.dialect.name == "postgresql" else "CAST(ts / ? AS INTEGER)"
        )
        return self.db.execute(
            f"SELECT {bucket} * ? AS bucket, decision, stage, tool, COUNT(*) AS n"
            " FROM decisions WHERE tenant = ? AND ts >= ? GROUP BY 1, 2, 3, 4",
            (bucket_seconds, bucket_seconds, tenant, since),
        ).rows

    def observed_counts(self, tenant: str, since: float) -> list[Row]:
        """``tenant``'s observe-mode checks since ``since`` whose would-be answer was not
        ``proceed``, per tool and would-be answer (columns tool, observed, n)."""
        return self.db.execute(
            "SELECT tool, observed, COUNT(*) AS n FROM decisions"
            " WHERE tenant = ? AND observed IS NOT NULL AND ts >= ? GROUP BY tool, observed",
            (tenant, since),
        ).rows

    def latencies(self, tenant: str, since: float, limit: int) -> list[float]:
        """The latency of ``tenant``'s newest ``limit`` checks since ``since``."""
        rows = self.db.execute(
            "SELECT latency_ms FROM decisions WHERE tenant = ? AND ts >= ?"
            " ORDER BY ts DESC LIMIT ?",
            (tenant, since, limit),
        ).rows
        return [float(row["latency_ms"]) for row in rows]

    def labelled(self, tenant: str, limit: int) -> list[Row]:
        """``tenant``'s newest labelled checks, each with its latest label: what calibration
        learns from (columns check_id, ts, tool, stage, score, explain_json, label)."""
        return self.db.execute(
            "SELECT d.check_id, d.ts, d.tool, d.stage, d.score, d.explain_json, f.label"
            " FROM feedback f JOIN decisions d ON d.check_id = f.check_id"
            " WHERE d.tenant = ? AND f.row_id ="
            " (SELECT MAX(g.row_id) FROM feedback g WHERE g.check_id = f.check_id)"
            " ORDER BY d.row_id DESC LIMIT ?",
            (tenant, limit),
        ).rows

    def _with_labels(self, rows: list[Row]) -> list[LogEntry]:
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


def _filters(query: LogQuery) -> tuple[list[str], list[object]]:
    """WHERE clauses an index serves: each filter is a column of an index that starts with
    the tenant (the cursor is added by the caller)."""
    where = ["tenant = ?"]
    params: list[object] = [query.tenant]
    if query.stage == "none":
        where.append("stage IS NULL")
    elif query.stage is not None:
        where.append("stage = ?")
        params.append(query.stage)
    for clause, value in (
        ("tool = ?", query.tool),
        ("decision = ?", query.decision),
        ("score >= ?", query.min_score),
        ("score <= ?", query.max_score),
        ("ts >= ?", query.since),
        ("ts < ?", query.until),
    ):
        if value is not None:
            where.append(clause)
            params.append(value)
    if query.borderline is not None:
        # A literal, not a parameter: only then may the partial index on borderline rows
        # serve the query.
        where.append("borderline = 1" if query.borderline else "borderline = 0")
    if query.observed == "any":
        where.append("observed IS NOT NULL")
    elif query.observed is not None:
        where.append("observed = ?")
        params.append(query.observed)
    if query.labelled is False:
        where.append("NOT EXISTS (SELECT 1 FROM feedback f WHERE f.check_id = decisions.check_id)")
    return where, params
