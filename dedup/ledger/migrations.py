"""Named schema migrations, recorded by name in ``schema_migrations``.

Each migration is a function returning its statements; its name is the record. Files made
before names were recorded carry only ``PRAGMA user_version``: their first N migrations are
recorded by name once, then every migration not yet recorded runs, in order, each in its own
write transaction (so two processes opening one file never apply a step twice).
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable

__all__ = ["MIGRATIONS", "migrate"]

Migration = Callable[[], tuple[str, ...]]
MIGRATIONS: list[Migration] = []

_DECISIONS_APPEND_ONLY = """CREATE TRIGGER decisions_no_update BEFORE UPDATE ON decisions
    BEGIN SELECT RAISE(ABORT, 'the decision log is append-only'); END"""


def migration(fn: Migration) -> Migration:
    """Register ``fn`` as the next migration; its name is what the database records."""
    MIGRATIONS.append(fn)
    return fn


@migration
def m001_calls_and_log() -> tuple[str, ...]:
    """Calls, the decision log and stored policies."""
    script = """
        CREATE TABLE calls (
            row_id INTEGER PRIMARY KEY,
            call_id TEXT NOT NULL UNIQUE,
            scope TEXT NOT NULL,
            session_id TEXT NOT NULL,
            tool TEXT NOT NULL,
            args_json TEXT NOT NULL,
            args_hash TEXT NOT NULL,
            exact_sig TEXT NOT NULL,
            exact_leaves TEXT NOT NULL,
            semantic_leaves TEXT NOT NULL,
            intent_key TEXT NOT NULL,
            idempotency_key TEXT,
            status TEXT NOT NULL,
            failure_class TEXT,
            result_json TEXT,
            error_json TEXT,
            created_at REAL NOT NULL,
            lease_expires_at REAL NOT NULL,
            completed_at REAL,
            attempt_of TEXT,
            superseded INTEGER NOT NULL DEFAULT 0,
            run_id TEXT,
            step TEXT
        );
        CREATE INDEX calls_candidates ON calls (scope, tool, exact_sig, created_at);
        CREATE INDEX calls_scope_tool ON calls (scope, tool, created_at);
        CREATE INDEX calls_session ON calls (session_id, row_id);
        CREATE INDEX calls_created ON calls (created_at);
        CREATE INDEX calls_idem ON calls (scope, idempotency_key)
            WHERE idempotency_key IS NOT NULL;
        CREATE UNIQUE INDEX calls_pending_intent ON calls (intent_key)
            WHERE status = 'pending';
        CREATE UNIQUE INDEX calls_pending_idem ON calls (scope, idempotency_key)
            WHERE status = 'pending' AND idempotency_key IS NOT NULL;

        CREATE TABLE decisions (
            row_id INTEGER PRIMARY KEY,
            check_id TEXT NOT NULL UNIQUE,
            ts REAL NOT NULL,
            scope TEXT NOT NULL,
            session_id TEXT NOT NULL,
            tool TEXT NOT NULL,
            args_json TEXT NOT NULL,
            decision TEXT NOT NULL,
            stage TEXT,
            score REAL,
            call_id TEXT,
            matched_call_id TEXT,
            latency_ms REAL NOT NULL,
            dry_run INTEGER NOT NULL,
            explain_json TEXT NOT NULL
        );
        CREATE TABLE policies (
            tool TEXT PRIMARY KEY,
            policy_json TEXT NOT NULL,
            updated_at REAL NOT NULL
        );
    """
    return (*_statements(script), _DECISIONS_APPEND_ONLY)


@migration
def m002_feedback() -> tuple[str, ...]:
    """Labels on checks, and the matches a 'distinct' label rules out from then on."""
    return _statements("""
        CREATE TABLE feedback (
            row_id INTEGER PRIMARY KEY,
            check_id TEXT NOT NULL,
            label TEXT NOT NULL,
            note TEXT,
            source TEXT NOT NULL,
            ts REAL NOT NULL
        );
        CREATE INDEX feedback_check ON feedback (check_id, row_id);
        CREATE TABLE excluded_matches (
            scope TEXT NOT NULL,
            tool TEXT NOT NULL,
            args_hash TEXT NOT NULL,
            call_id TEXT NOT NULL,
            PRIMARY KEY (scope, tool, args_hash, call_id)
        ) WITHOUT ROWID;
    """)


@migration
def m003_exact_lookup() -> tuple[str, ...]:
    """An index for the exact fast path: one scope, one tool, one canonical args hash."""
    return ("CREATE INDEX calls_exact ON calls (scope, tool, args_hash, created_at)",)


@migration
def m004_sent_args_and_borderline() -> tuple[str, ...]:
    """Calls keep the args as sent; log entries mark a borderline match in a column.

    Older entries said "borderline" only in a stage's detail text; that text is read here,
    once, so nothing downstream ever depends on its wording again.
    """
    return (
        "ALTER TABLE calls ADD COLUMN sent_args_json TEXT",
        "ALTER TABLE decisions ADD COLUMN borderline INTEGER NOT NULL DEFAULT 0",
        "DROP TRIGGER decisions_no_update",
        "UPDATE decisions SET borderline = 1"
        """ WHERE explain_json LIKE '%"detail":"borderline: at or above%'""",
        _DECISIONS_APPEND_ONLY,
    )


@migration
def m005_embeddings() -> tuple[str, ...]:
    """Vectors by (model, text hash); files from before 0.2 already have this table."""
    return (
        """CREATE TABLE IF NOT EXISTS embeddings (
            model TEXT NOT NULL,
            text_hash TEXT NOT NULL,
            dim INTEGER NOT NULL,
            vector BLOB NOT NULL,
            PRIMARY KEY (model, text_hash)
        ) WITHOUT ROWID""",
    )


@migration
def m006_keys_and_embedding_use() -> tuple[str, ...]:
    """Explicit keys bound to one intent, replays found by what was sent, and when a vector
    was last needed by a stored call."""
    return (
        """CREATE TABLE idempotency_keys (
            scope TEXT NOT NULL,
            key TEXT NOT NULL,
            tool TEXT NOT NULL,
            intent_key TEXT NOT NULL,
            sent_hash TEXT NOT NULL,
            created_at REAL NOT NULL,
            PRIMARY KEY (scope, key)
        ) WITHOUT ROWID""",
        # A byte-for-byte replay (a queue's redelivery, a runtime's replay) is found by the
        # hash of what was sent, whatever its timestamps say by now.
        "ALTER TABLE calls ADD COLUMN sent_hash TEXT",
        "CREATE INDEX calls_sent ON calls (scope, tool, sent_hash, created_at)"
        " WHERE sent_hash IS NOT NULL",
        "CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at)",
        "ALTER TABLE embeddings ADD COLUMN used_at REAL NOT NULL DEFAULT 0",
        # Vectors cached before this migration count as used now, so the first purge
        # keeps them for a full retention period instead of deleting them at start.
        "UPDATE embeddings SET used_at = CAST(strftime('%s', 'now') AS REAL)",
        "CREATE INDEX embeddings_used ON embeddings (used_at)",
    )


def _statements(script: str) -> tuple[str, ...]:
    return tuple(part.strip() for part in script.split(";") if part.strip())


def _applied(conn: sqlite3.Connection) -> set[str]:
    return {name for (name,) in conn.execute("SELECT name FROM schema_migrations")}


def migrate(conn: sqlite3.Connection) -> list[str]:
    """Apply every migration not yet recorded; return the names now applied, in order."""
    conn.execute(
        "CREATE TABLE IF NOT EXISTS schema_migrations (name TEXT PRIMARY KEY, applied_at REAL)"
    )
    conn.execute("BEGIN IMMEDIATE")
    try:
        if not _applied(conn):
            legacy = int(conn.execute("PRAGMA user_version").fetchone()[0])
            conn.executemany(
                "INSERT INTO schema_migrations (name, applied_at) VALUES (?, ?)",
                [(step.__name__, time.time()) for step in MIGRATIONS[:legacy]],
            )
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    for step in MIGRATIONS:
        conn.execute("BEGIN IMMEDIATE")
        try:
            # Read again under the write lock: another process may have applied it meanwhile.
            if step.__name__ not in _applied(conn):
                for statement in step():
                    conn.execute(statement)
                conn.execute(
                    "INSERT INTO schema_migrations (name, applied_at) VALUES (?, ?)",
                    (step.__name__, time.time()),
                )
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
    return [step.__name__ for step in MIGRATIONS]
